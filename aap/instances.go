package aap

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/askops/askops/internal/recordid"
	"github.com/askops/askops/pending"
)

// instance is the stored instance.
type instance struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Provisioner string    `json:"provisioner"`
	CreatedAt   time.Time `json:"created_at"`
	DeletedAt   time.Time `json:"deleted_at,omitzero"`
	// Delivery is the verified receiver, nil without one.
	Delivery *delivery `json:"delivery,omitempty"`
}

// instanceJSON is the protocol's Instance.
type instanceJSON struct {
	ID       string        `json:"id"`
	Name     string        `json:"name"`
	Delivery *deliveryJSON `json:"delivery,omitempty"`
}

func (i instance) json() instanceJSON {
	j := instanceJSON{ID: i.ID, Name: i.Name}
	if i.Delivery != nil {
		j.Delivery = &deliveryJSON{Type: "webhook", URL: i.Delivery.URL, RegistrationID: i.Delivery.RegistrationID}
	}
	return j
}

// provisioned is the idempotency record of a provisioning: the input's
// digest, the instance, and its credential sealed with a key only a
// replay can make (the provisioner's token and the idempotency key), so
// the store never holds a usable credential.
type provisioned struct {
	Input    string    `json:"input"`
	Instance string    `json:"instance,omitempty"` // "" while the first attempt is committing
	Sealed   string    `json:"sealed,omitempty"`
	At       time.Time `json:"at"`
}

// instanceInput is the parsed ProvisionInstanceRequest / UpdateInstanceRequest.
type instanceInput struct {
	name     string
	hasName  bool
	delivery *delivery // a (new) receiver to verify
	remove   bool      // delivery: null (an update only)
}

// readInstanceInput parses an instance body and returns it with the
// digest of its parsed fields (the signing secret included, so a
// changed secret is changed input).
func (s *Server) readInstanceInput(r *http.Request, update bool) (instanceInput, string, error) {
	m, err := readObject(r)
	if err != nil {
		return instanceInput{}, "", err
	}
	if err := unknownMember(m, "instance_name", "delivery"); err != nil {
		return instanceInput{}, "", err
	}
	name, has, err := stringField(m, "instance_name")
	if err != nil {
		return instanceInput{}, "", err
	}
	in := instanceInput{name: name, hasName: has}
	deliveryDigest := "absent"
	if raw, ok := m["delivery"]; ok {
		switch {
		case string(bytes.TrimSpace(raw)) == "null" && update:
			in.remove, deliveryDigest = true, "null"
		default:
			d, err := readDelivery(raw, s.cfg.AllowPrivateWebhooks)
			if err != nil {
				return instanceInput{}, "", err
			}
			in.delivery, deliveryDigest = &d, jsonString(d)
		}
	}
	switch {
	case has && name == "":
		return instanceInput{}, "", invalid("invalid_field", "instance_name", "instance_name must not be empty.")
	case len(name) > maxName:
		return instanceInput{}, "", invalid("invalid_field", "instance_name", "instance_name is longer than %d bytes.", maxName)
	case update && !has && deliveryDigest == "absent":
		return instanceInput{}, "", invalid("invalid_request", "", "The update names no field.")
	}
	d := sha256.Sum256([]byte(jsonString(map[string]any{"instance_name": name, "has": has, "delivery": deliveryDigest})))
	return in, hex.EncodeToString(d[:]), nil
}

// instanceRequest is what creating and updating an instance read first:
// the provisioner, the Idempotency-Key, and the body with its digest.
func (s *Server) instanceRequest(r *http.Request, update bool) (prov provisioner, key string, in instanceInput, digest string, err error) {
	if prov, err = s.provisionerOf(r); err != nil {
		return
	}
	if key, err = idempotencyKey(r); err != nil {
		return
	}
	in, digest, err = s.readInstanceInput(r, update)
	return
}

// createInstance serves POST /v1/instances.
func (s *Server) createInstance(r *http.Request, rid string) (int, any, error) {
	prov, key, in, digest, err := s.instanceRequest(r, false)
	if err != nil {
		return 0, nil, err
	}
	ctx := r.Context()
	ik := idemInstKey(prov.name, key)
	claim := provisioned{Input: digest, At: s.now()}
	// Claimed briefly while this attempt verifies and commits: a
	// concurrent attempt with the key is told to retry, never verified
	// twice; a failed verification frees the key for a retry.
	claimed, held, err := s.cfg.Store.Claim(ctx, ik, jsonBytes(claim), claimTTL)
	if err != nil {
		return 0, nil, s.storeErr(rid, err)
	}
	if !claimed {
		return s.replayInstance(ctx, rid, prov, key, digest, held)
	}
	inst := instance{ID: recordid.NewUUID(), Name: in.name, Provisioner: prov.name, CreatedAt: s.now()}
	if inst.Name == "" {
		inst.Name = "aap-" + inst.ID[:8]
	}
	if in.delivery != nil {
		if err := s.verify(ctx, rid, prov, *in.delivery, inst.ID); err != nil {
			_ = s.cfg.Store.Drop(context.WithoutCancel(ctx), ik)
			return 0, nil, err
		}
		d := *in.delivery
		d.Since = s.now()
		inst.Delivery = &d
	}
	cred := "aap_" + recordid.New() + recordid.New() // 256 random bits
	sealed, err := seal(sealKey(prov, key), cred)
	if err != nil {
		return 0, nil, err
	}
	if err := s.cfg.Store.Put(ctx, instKey(inst.ID), jsonBytes(inst), 0); err != nil {
		_ = s.cfg.Store.Drop(context.WithoutCancel(ctx), ik)
		return 0, nil, s.storeErr(rid, err)
	}
	digestOf := credentialDigest(cred)
	if err := s.cfg.Store.Put(ctx, credOfKey(inst.ID), []byte(digestOf), 0); err != nil {
		_ = s.cfg.Store.Drop(context.WithoutCancel(ctx), ik, instKey(inst.ID))
		return 0, nil, s.storeErr(rid, err)
	}
	if err := s.cfg.Store.Put(ctx, credKey(digestOf), []byte(inst.ID), 0); err != nil {
		_ = s.cfg.Store.Drop(context.WithoutCancel(ctx), ik, instKey(inst.ID), credOfKey(inst.ID))
		return 0, nil, s.storeErr(rid, err)
	}
	claim.Instance, claim.Sealed = inst.ID, sealed
	if err := s.cfg.Store.Put(ctx, ik, jsonBytes(claim), Retention); err != nil {
		_ = s.cfg.Store.Drop(context.WithoutCancel(ctx), ik, instKey(inst.ID), credOfKey(inst.ID), credKey(digestOf))
		return 0, nil, s.storeErr(rid, err)
	}
	if inst.Delivery != nil {
		if err := s.cfg.Store.AddMember(ctx, deliveringKey, inst.ID); err != nil {
			return 0, nil, s.storeErr(rid, err)
		}
	}
	s.log.Info("aap: instance created", "instance", inst.ID, "name", inst.Name, "provisioner", prov.name, "request_id", rid)
	return http.StatusCreated, provisionResponse(inst, cred), nil
}

// replayable says whether a key used before may answer again: the first
// use's input (its digest) must be this one's, and the first attempt,
// named by what ("A request", "An update"), must have finished.
func replayable(first, digest string, finished bool, what string) error {
	switch {
	case first != digest:
		return conflict("idempotency_conflict", "The idempotency key was already used for different input.")
	case !finished:
		return conflict("request_in_progress", what+" with this idempotency key is still being processed; retry shortly.")
	}
	return nil
}

func provisionResponse(inst instance, cred string) any {
	return map[string]any{"instance": inst.json(), "credential": map[string]string{"token": cred}}
}

// replayInstance answers a provisioning whose key was used before.
func (s *Server) replayInstance(ctx context.Context, rid string, prov provisioner, key, digest string, held []byte) (int, any, error) {
	var p provisioned
	if err := json.Unmarshal(held, &p); err != nil {
		return 0, nil, err
	}
	if err := replayable(p.Input, digest, p.Instance != "", "A request"); err != nil {
		return 0, nil, err
	}
	inst, ok, err := s.loadInstance(ctx, p.Instance)
	if err != nil {
		return 0, nil, s.storeErr(rid, err)
	}
	if !ok || !inst.DeletedAt.IsZero() {
		return 0, nil, conflict("instance_deleted", "The instance this key created has been deleted; it is not recreated.")
	}
	cred, err := unseal(sealKey(prov, key), p.Sealed)
	if err != nil {
		// Sealed with the provisioner's token of the time: after the
		// token is rotated nobody can open it, and the store holds no
		// credential in the clear to show again.
		s.log.Info("aap: a provisioning replay cannot show its credential (the provisioner's token changed since)", "instance", inst.ID, "provisioner", prov.name, "request_id", rid)
		return 0, nil, conflict("credential_unavailable", "The instance this key created exists, but its credential was sealed with the provisioner's previous token and cannot be shown again; delete the instance and provision a new one.")
	}
	return http.StatusOK, provisionResponse(inst, cred), nil
}

// sealKey is the key a provisioning's credential is sealed with: only the
// provisioner replaying the same key can make it again.
func sealKey(p provisioner, idemKey string) [32]byte {
	return sha256.Sum256([]byte("askops aap credential\x00" + p.token + "\x00" + idemKey))
}

// aead is AES-256-GCM under key: what seals a provisioning's credential.
func aead(key [32]byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func seal(key [32]byte, plain string) (string, error) {
	gcm, err := aead(key)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, gcm.NonceSize())
	_, _ = rand.Read(nonce)
	return base64.StdEncoding.EncodeToString(gcm.Seal(nonce, nonce, []byte(plain), nil)), nil
}

func unseal(key [32]byte, sealed string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil {
		return "", err
	}
	gcm, err := aead(key)
	if err != nil {
		return "", err
	}
	if len(b) < gcm.NonceSize() {
		return "", errors.New("aap: sealed credential too short")
	}
	plain, err := gcm.Open(nil, b[:gcm.NonceSize()], b[gcm.NonceSize():], nil)
	return string(plain), err
}

// loadInstance reads instance id (deleted ones too, while their record lasts).
func (s *Server) loadInstance(ctx context.Context, id string) (instance, bool, error) {
	return loadJSON[instance](ctx, s.cfg.Store, instKey(id))
}

// loadJSON reads the record stored as JSON under key: false when there is none.
func loadJSON[T any](ctx context.Context, st Store, key string) (T, bool, error) {
	var v T
	b, ok, err := st.Get(ctx, key)
	if err != nil || !ok {
		return v, false, err
	}
	if err := json.Unmarshal(b, &v); err != nil {
		var zero T
		return zero, false, err
	}
	return v, true, nil
}

// provisionersInstance is instance id if prov may manage it (else 404,
// as unknown as a wrong id).
func (s *Server) provisionersInstance(ctx context.Context, rid string, prov provisioner, id string) (instance, error) {
	return loadOwned(ctx, s, rid, instKey, id, func(inst instance) bool { return inst.Provisioner == prov.name })
}

// loadOwned is the record stored under key(id) if owns says the caller
// may see it: a malformed id, a missing record and another's are one 404.
func loadOwned[T any](ctx context.Context, s *Server, rid string, key func(string) string, id string, owns func(T) bool) (T, error) {
	var zero T
	if !recordid.ValidUUID(id) {
		return zero, errNotFound
	}
	v, ok, err := loadJSON[T](ctx, s.cfg.Store, key(id))
	if err != nil {
		return zero, s.storeErr(rid, err)
	}
	if !ok || !owns(v) {
		return zero, errNotFound
	}
	return v, nil
}

// pathInstance is the provisioner calling and the instance the path names
// ({id}), if that provisioner may manage it: what reading and deleting an
// instance start with.
func (s *Server) pathInstance(r *http.Request, rid string) (provisioner, instance, error) {
	prov, err := s.provisionerOf(r)
	if err != nil {
		return provisioner{}, instance{}, err
	}
	inst, err := s.provisionersInstance(r.Context(), rid, prov, r.PathValue("id"))
	return prov, inst, err
}

// getInstance serves GET /v1/instances/{id}.
func (s *Server) getInstance(r *http.Request, rid string) (int, any, error) {
	_, inst, err := s.pathInstance(r, rid)
	if err != nil {
		return 0, nil, err
	}
	if !inst.DeletedAt.IsZero() {
		return 0, nil, errNotFound
	}
	return http.StatusOK, inst.json(), nil
}

// patched is an update's idempotency record; Response.ID is empty while
// the first attempt is verifying and committing.
type patched struct {
	Input    string       `json:"input"`
	Response instanceJSON `json:"response"`
}

// updateInstance serves PATCH /v1/instances/{id}: a new name, a new
// receiver (verified before anything is committed), or none (null).
func (s *Server) updateInstance(r *http.Request, rid string) (int, any, error) {
	prov, key, in, digest, err := s.instanceRequest(r, true)
	if err != nil {
		return 0, nil, err
	}
	ctx := r.Context()
	inst, err := s.provisionersInstance(ctx, rid, prov, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	if !inst.DeletedAt.IsZero() {
		return 0, nil, errNotFound // a replay against a deleted instance too
	}
	pk := idemPatchKey(prov.name, inst.ID, key)
	claimed, held, err := s.cfg.Store.Claim(ctx, pk, jsonBytes(patched{Input: digest}), claimTTL)
	if err != nil {
		return 0, nil, s.storeErr(rid, err)
	}
	if !claimed {
		var p patched
		if err := json.Unmarshal(held, &p); err != nil {
			return 0, nil, err
		}
		if err := replayable(p.Input, digest, p.Response.ID != "", "An update"); err != nil {
			return 0, nil, err
		}
		return http.StatusOK, p.Response, nil // the original response; a later update stands
	}
	release := func() { _ = s.cfg.Store.Drop(context.WithoutCancel(ctx), pk) }
	if in.hasName {
		inst.Name = in.name
	}
	if in.remove {
		inst.Delivery = nil
	}
	if in.delivery != nil {
		if err := s.verify(ctx, rid, prov, *in.delivery, inst.ID); err != nil {
			release()
			return 0, nil, err // nothing changed, the name included
		}
		d := *in.delivery
		d.Since = s.now()
		if inst.Delivery != nil {
			// A replacement: delivery never stopped, so a request decided
			// under the old receiver whose event the delivery loop has not
			// recorded yet still gets one, sent to this receiver.
			d.Since = inst.Delivery.Since
		}
		inst.Delivery = &d
	}
	// Deletion takes precedence: an instance deleted meanwhile stays so.
	if cur, ok, err := s.loadInstance(ctx, inst.ID); err != nil {
		release()
		return 0, nil, s.storeErr(rid, err)
	} else if !ok || !cur.DeletedAt.IsZero() {
		release()
		return 0, nil, errNotFound
	}
	if err := s.cfg.Store.Put(ctx, instKey(inst.ID), jsonBytes(inst), 0); err != nil {
		release()
		return 0, nil, s.storeErr(rid, err)
	}
	if inst.Delivery != nil {
		err = s.cfg.Store.AddMember(ctx, deliveringKey, inst.ID)
	} else {
		err = s.cfg.Store.RemoveMember(ctx, deliveringKey, inst.ID)
	}
	if err != nil {
		// The instance is written but its delivery set is not: give the
		// key back, so the provisioner's retry redoes both at once.
		release()
		return 0, nil, s.storeErr(rid, err)
	}
	if err := s.cfg.Store.Put(ctx, pk, jsonBytes(patched{Input: digest, Response: inst.json()}), Retention); err != nil {
		s.log.Warn("aap: could not keep the update's idempotency key", "instance", inst.ID, "err", err)
	}
	return http.StatusOK, inst.json(), nil
}

// deleteInstance serves DELETE /v1/instances/{id}: the credential is
// revoked first (no request can be made after), then every request that
// may be pending is cancelled. Repeating it answers 204 while the
// deletion record lasts.
func (s *Server) deleteInstance(r *http.Request, rid string) (int, any, error) {
	prov, inst, err := s.pathInstance(r, rid)
	if err != nil {
		return 0, nil, err
	}
	ctx := r.Context()
	if inst.DeletedAt.IsZero() {
		inst.DeletedAt = s.now()
		if err := s.cfg.Store.Put(ctx, instKey(inst.ID), jsonBytes(inst), Retention); err != nil {
			return 0, nil, s.storeErr(rid, err)
		}
		s.log.Info("aap: instance deleted", "instance", inst.ID, "provisioner", prov.name, "request_id", rid)
	}
	// Also on a repeat: a deletion cut short by a store failure finishes.
	// Its queued notifications end at their next turn (attempt).
	if err := s.cfg.Store.RemoveMember(ctx, deliveringKey, inst.ID); err != nil {
		return 0, nil, s.storeErr(rid, err)
	}
	if err := s.dropCredentials(ctx, inst.ID); err != nil {
		return 0, nil, s.storeErr(rid, err)
	}
	if err := s.cancelOpen(ctx, inst.ID); err != nil {
		return 0, nil, s.storeErr(rid, err)
	}
	return http.StatusNoContent, nil, nil
}

// dropCredentials revokes the instance's credential: credof:<id> names
// the digest whose cred: record makes it valid, and both go.
func (s *Server) dropCredentials(ctx context.Context, id string) error {
	b, ok, err := s.cfg.Store.Get(ctx, credOfKey(id))
	if err != nil || !ok {
		return err
	}
	return s.cfg.Store.Drop(ctx, credKey(string(b)), credOfKey(id))
}

// cancelOpen cancels every request of the instance that is still
// pending; those that ended keep their outcome.
func (s *Server) cancelOpen(ctx context.Context, id string) error {
	ids, err := s.cfg.Store.Members(ctx, openKey(id))
	if err != nil {
		return err
	}
	for _, rq := range ids {
		_, err := s.cfg.Asks.Decide(ctx, rq, pending.Cancelled, "aap:"+id, reasonInstanceDeleted)
		if _, ended := pending.ConflictAsk(err); err != nil && !ended && pending.ErrorCode(err) != pending.CodeNotFound {
			return err
		}
		if err := s.cfg.Store.RemoveMember(ctx, openKey(id), rq); err != nil {
			return err
		}
	}
	return nil
}

// reasonInstanceDeleted is the reason of a request cancelled because its
// instance was deleted.
const reasonInstanceDeleted = "the AAP instance was deleted"

// instanceOfCredential is the live instance a credential belongs to.
func (s *Server) instanceOfCredential(ctx context.Context, tok string) (instance, bool, error) {
	if tok == "" {
		return instance{}, false, nil
	}
	id, ok, err := s.cfg.Store.Get(ctx, credKey(credentialDigest(tok)))
	if err != nil || !ok {
		return instance{}, false, err
	}
	inst, ok, err := s.loadInstance(ctx, string(id))
	if err != nil || !ok || !inst.DeletedAt.IsZero() {
		return instance{}, false, err
	}
	return inst, true, nil
}

// storeErr is a store failure as the protocol's 503 (never a decision).
func (s *Server) storeErr(rid string, err error) error {
	s.log.Warn("aap: store unavailable", "request_id", rid, "err", err)
	return errUnavailable
}

func jsonBytes(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func jsonString(v any) string { return string(jsonBytes(v)) }
