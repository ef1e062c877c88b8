//go:build !linux

package priority

func lowerThread(int) {}

func threadNice() (int, error) { return 0, nil }
