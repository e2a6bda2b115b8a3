// Command idlehop measures what one hop between two processes costs on
// this machine when the receiving side has been idle: a one-byte TCP
// ping-pong over loopback between this process and a copy of itself,
// back to back and after 1 ms and 50 ms of idleness.
//
// A click's way to the agent is four such hops at least (Slack to replica
// B, B to Redis, Redis to replica A, A to the model), each into a process
// that was waiting, so this is the floor under BenchmarkClickToResume that
// no code in askops can lower. Run it with
//
//	go run ./bench/idlehop
package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"time"
)

const rounds = 300

func main() {
	if len(os.Args) > 1 && os.Args[1] == "echo" {
		if err := echo(); err != nil {
			fmt.Fprintln(os.Stderr, "idlehop echo:", err)
			os.Exit(1)
		}
		return
	}
	if err := measure(); err != nil {
		fmt.Fprintln(os.Stderr, "idlehop:", err)
		os.Exit(1)
	}
}

// echo serves one connection on a loopback port it prints, returning each
// byte it reads.
func echo() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr())
	c, err := ln.Accept()
	if err != nil {
		return err
	}
	_, err = io.Copy(c, c)
	return err
}

func measure() error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "echo")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return err
	}
	c, err := net.DialTimeout("tcp", addr[:len(addr)-1], 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	b := []byte{1}
	for _, idle := range []time.Duration{0, time.Millisecond, 50 * time.Millisecond} {
		rtt := make([]time.Duration, 0, rounds)
		for range rounds {
			time.Sleep(idle)
			start := time.Now()
			if _, err := c.Write(b); err != nil {
				return err
			}
			if _, err := io.ReadFull(c, b); err != nil {
				return err
			}
			rtt = append(rtt, time.Since(start))
		}
		slices.Sort(rtt)
		at := func(q float64) time.Duration {
			return rtt[min(len(rtt)-1, int(q*float64(len(rtt))))].Round(time.Microsecond)
		}
		fmt.Printf("after %-6s idle: round trip p50 %-8s p90 %-8s p99 %s\n", idle, at(.5), at(.9), at(.99))
	}
	return nil
}
