#!/usr/bin/env python3
"""Where the time of a click goes, from the execution traces of both replicas.

BenchmarkClickToResume with ASKOPS_BENCH_PROFILE=DIR writes DIR/A-1-trace and
DIR/B-1-trace (the click phase of replica A, which waits, and B, which takes
the clicks). Both processes stamp their events with the same monotonic clock,
so their goroutine state changes merge into one timeline. For every click this
finds, from the stacks of those changes:

  b_in     B: the request read -> the decision's write to Redis
  b_redis  B: that write -> B running again with the reply
  b_to_a   B's write -> A reading the announcement
  a_wake   A: the announcement read -> the write_file tool's first syscall
  a_tool   A: the tool's syscalls (open the workspace ... close the file)
  a_build  A: the tool done -> the model request handed to the HTTP transport
  a_send   A: handed over -> the transport's write done
  total    the request read on B -> the model request written by A

Tracing slows every goroutine switch and allocation, so the sums run above
the benchmark's own numbers; compare phases between commits, traced alike.

    ASKOPS_BENCH_PROFILE=/tmp/prof go test ./e2e -run '^$' \\
        -bench 'ClickToResume/waiting=100$' -benchtime 1x
    python3 bench/clickphases/clickphases.py /tmp/prof

It reads the traces through `go tool trace -d=parsed` (Go 1.26's text dump).
"""
import re
import subprocess
import sys

EVENT = re.compile(r'^M=(-?\d+) P=(-?\d+) G=(-?\d+) (\w+) Time=(\d+)(.*)$')
TRANSITION = re.compile(r'GoID=(-?\d+) (\S+)->(\S+) Reason="([^"]*)"')


def frames(lines):
    return [l.strip().split(' @ ')[0] for l in lines if l.strip() and not l.strip().startswith('/')]


def transitions(path, proc):
    """The goroutine state changes in one trace: (time, proc, goroutine,
    from, to, reason, first frame, askops frames joined by '<')."""
    dump = subprocess.run(['go', 'tool', 'trace', '-d=parsed', path], capture_output=True, text=True, check=True).stdout
    out, cur, stack, mode = [], None, [], None

    def flush():
        if cur:
            fr = frames(stack)
            own = [f for f in fr if 'askops' in f]
            out.append(cur + ((fr[0] if fr else ''), ' < '.join(own[:4])))

    for line in dump.splitlines():
        m = EVENT.match(line)
        if m:
            flush()
            cur, stack, mode = None, [], None
            if m.group(4) == 'StateTransition':
                t = TRANSITION.search(m.group(6))
                if t:
                    cur = (int(m.group(5)), proc, 'G' + t.group(1), t.group(2), t.group(3), t.group(4))
        elif line.startswith('TransitionStack='):
            mode, stack = 'transition', []
        elif line.startswith('Stack='):
            mode = 'stack'
        elif mode == 'transition' or (mode == 'stack' and not stack):
            stack.append(line)
    flush()
    return out


def phases(rows):
    by_g = {}
    for i, r in enumerate(rows):
        by_g.setdefault((r[1], r[2]), []).append(i)
    found = []
    for ci, r in enumerate(rows):
        t, proc, g, frm, to, why, top, own = r
        # The decision's write: the vote script sent by a click's handler.
        if not (proc == 'B' and to == 'Syscall' and 'syscall.write' in top and 'RedisStore).settle' in own
                and ('castVote' in own or 'castOnMessage' in own)):
            continue
        idx = by_g[(proc, g)]
        k = idx.index(ci)
        start = None
        for j in reversed(idx[:k]):  # back to the request: the wait before it is the connection's idle read
            if rows[j][4] == 'Waiting' and 'network' in rows[j][5] and 'askops' not in rows[j][7]:
                break
            start = rows[j][0]
        reply = next((rows[j][0] for j in idx[k + 1:] if rows[j][3] == 'Runnable' and rows[j][4] == 'Running'), None)
        sub = tool0 = tool1 = handed = sent = agent = None
        for j in range(ci, len(rows)):
            t2, p2, g2, f2, to2, _, top2, own2 = rows[j]
            if t2 - t > 30e6:
                break
            if p2 != 'A':
                continue
            if sub is None:
                if to2 == 'Syscall' and 'Subscription).run' in own2:
                    sub = t2
            elif tool0 is None:
                if to2 == 'Syscall' and 'openat' in top2 and 'inWorkspace' in own2:
                    tool0, agent = t2, g2
            elif tool1 is None:
                if g2 == agent and 'Close' in top2 and 'inWorkspace' in own2:
                    tool1 = t2
            elif handed is None:
                if g2 == agent and to2 == 'Waiting' and 'retryAfterDoer' in own2:
                    handed = t2
            elif f2 == 'Syscall' and to2 == 'Running' and g2 != agent:
                sent = t2
                break
        if None in (start, reply, sub, tool0, tool1, handed, sent):
            continue
        found.append({'b_in': t - start, 'b_redis': reply - t, 'b_to_a': sub - t, 'a_wake': tool0 - sub,
                      'a_tool': tool1 - tool0, 'a_build': handed - tool1, 'a_send': sent - handed, 'total': sent - start})
    return found


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1].rstrip('/')
    rows = sorted(transitions(d + '/A-1-trace', 'A') + transitions(d + '/B-1-trace', 'B'))
    found = phases(rows)
    print(f'{len(found)} clicks (µs)')
    for name in ['b_in', 'b_redis', 'b_to_a', 'a_wake', 'a_tool', 'a_build', 'a_send', 'total']:
        v = sorted(f[name] / 1000 for f in found)
        if v:
            pick = lambda q: v[min(len(v) - 1, int(len(v) * q))]
            print(f'{name:8s} p50 {pick(.5):8.1f}  p90 {pick(.9):8.1f}  p99 {pick(.99):8.1f}  max {v[-1]:8.1f}')


if __name__ == '__main__':
    main()
