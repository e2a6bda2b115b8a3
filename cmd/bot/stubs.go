package main

import (
	"context"
	"fmt"
)

func cmdServeMain(ctx context.Context, env *environment, args []string) int {
	fmt.Fprintln(env.stderr, "bot serve: not wired yet")
	return exitUsage
}

func cmdRunMain(ctx context.Context, env *environment, args []string) int {
	fmt.Fprintln(env.stderr, "bot run: not wired yet")
	return exitUsage
}

func cmdAskMain(ctx context.Context, env *environment, args []string) int {
	fmt.Fprintln(env.stderr, "bot ask: not wired yet")
	return exitUsage
}
