package where_test

import (
	"errors"
	"fmt"

	"github.com/mapfarm/mapfarm/internal/where"
)

func Example() {
	e, err := where.Parse("pop > 1000 and name like 'A%'")
	if err != nil {
		panic(err)
	}
	fmt.Println(e.String())
	fmt.Println(e.Fields())

	p, err := e.Compile(where.Schema{
		{Name: "NAME", Type: where.String},
		{Name: "POP", Type: where.Integer},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Match([]any{"Avon", int64(5000)}))
	fmt.Println(p.Match([]any{"Bath", int64(5000)}))
	fmt.Println(p.Match([]any{"Avon", nil}))
	// Output:
	// pop > 1000 AND name LIKE 'A%'
	// [pop name]
	// true
	// false
	// false
}

func ExampleSyntaxError() {
	_, err := where.Parse("POSITION('a' IN NAME AND 1) = 1")
	fmt.Println(err)
	var se *where.SyntaxError
	if errors.As(err, &se) {
		fmt.Println(se.Pos)
	}
	// Output:
	// where: syntax error at position 21: expected ')' but found 'AND'
	// 21
}
