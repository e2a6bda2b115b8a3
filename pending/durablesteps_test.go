package pending

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/internal/redistest"
)

// The follow-up schedule's writes wait for the replicas as decisions do: on
// a master whose replica never acknowledges, scheduling, recording a DM
// copy and finishing a step are refused (unavailable), never confirmed on
// one copy a failover may lose; with the replica there, they go through.
func TestRedisStepsWaitForReplicas(t *testing.T) {
	master := redistest.Start(t)
	ctx := t.Context()
	plain := newRedisStore(t, master.URL(), Options{ReplicaAcks: -1, Logger: quietLogger()})
	held := newRedisStore(t, master.URL(), Options{ReplicaAcks: 1, ReplicaTimeout: 100 * time.Millisecond, Logger: quietLogger()})

	a, err := plain.Create(ctx, sampleRequest(1), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	due := []DueStep{{Name: "remind", Due: a.CreatedAt.Add(-time.Second)}}
	if err := held.ScheduleSteps(ctx, a.ID, due); ErrorCode(err) != CodeUnavailable {
		t.Errorf("schedule with no replica to hold it: %v, want unavailable", err)
	}
	if err := held.AddCopy(ctx, a.ID, "D1", "1.1"); ErrorCode(err) != CodeUnavailable {
		t.Errorf("add copy with no replica to hold it: %v, want unavailable", err)
	}
	if err := plain.ScheduleSteps(ctx, a.ID, due); err != nil {
		t.Fatal(err)
	}
	claimed, err := held.ClaimSteps(ctx, time.Minute, 10)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim = %v, %v", claimed, err)
	}
	done := StepDone{Kind: EventReminded, To: "U1", Text: "reminded"}
	if ok, err := held.FinishStep(ctx, claimed[0], done); ErrorCode(err) != CodeUnavailable {
		t.Errorf("finish with no replica to hold it: %v %v, want unavailable", ok, err)
	}

	if _, err := master.Do("CONFIG", "SET", "repl-diskless-sync-delay", "0"); err != nil {
		t.Fatal(err)
	}
	replica := redistest.Start(t)
	host, port, _ := net.SplitHostPort(master.Addr())
	if _, err := replica.Do("REPLICAOF", host, port); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		info, _ := master.Cli("INFO", "replication")
		if strings.Contains(info, "state=online") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica never came online:\n%s", info)
		}
	}
	master.WaitReplicated(20 * time.Second)
	// (The refused finish above did run on the master: like a decision
	// whose WAIT fell short, it is unconfirmed, not undone.) A loaded
	// machine may take its time to acknowledge: the timeout is generous.
	held = newRedisStore(t, master.URL(), Options{ReplicaAcks: 1, ReplicaTimeout: 10 * time.Second, Logger: quietLogger()})
	b, err := plain.Create(ctx, sampleRequest(2), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := held.ScheduleSteps(ctx, b.ID, []DueStep{{Name: "remind", Due: b.CreatedAt.Add(-time.Second)}}); err != nil {
		t.Errorf("schedule with the replica holding it: %v", err)
	}
	if err := held.AddCopy(ctx, b.ID, "D1", "1.1"); err != nil {
		t.Errorf("add copy with the replica holding it: %v", err)
	}
	claimed, err = held.ClaimSteps(ctx, time.Minute, 10)
	if err != nil || len(claimed) != 1 || claimed[0].Ask.ID != b.ID {
		t.Fatalf("claim = %v, %v", claimed, err)
	}
	if ok, err := held.FinishStep(ctx, claimed[0], done); err != nil || !ok {
		t.Errorf("finish with the replica holding it: %v %v", ok, err)
	}
}
