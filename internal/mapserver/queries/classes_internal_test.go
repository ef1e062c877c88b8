package queries

import (
	"slices"
	"testing"
)

func TestBreaks(t *testing.T) {
	clusters := []float64{1, 2, 3, 10, 11, 12, 20, 21, 22}
	tests := []struct {
		name string
		got  []float64
		want []float64
	}{
		{"natural breaks find the clusters", naturalBreaks(clusters, 3), []float64{3, 12, 22}},
		{"natural breaks, two classes", naturalBreaks(clusters, 2), []float64{12, 22}},
		{"natural breaks, more classes than values", naturalBreaks([]float64{5, 5, 7}, 4), []float64{5, 7}},
		{"natural breaks, one class", naturalBreaks(clusters, 1), []float64{22}},
		{"equal interval", equalInterval([]float64{0, 3, 10}, 5), []float64{2, 4, 6, 8, 10}},
		{"quantile", quantile([]float64{1, 2, 3, 4, 5, 6, 7, 8}, 4), []float64{2, 4, 6, 8}},
		{"quantile merges equal edges", quantile([]float64{1, 1, 1, 1, 1, 1, 2, 3}, 4), []float64{1, 3}},
		{"standard deviation", stdDevBreaks([]float64{-1, 1}, 1), []float64{-0.5, 0.5, 1}},
	}
	for _, tc := range tests {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}
