package aap

import "strconv"

// The store's names (RedisStore puts each under askops' namespace as
// askops:aap:<name>):
//
//	inst:<id>                      an instance (JSON); after deletion its deletion record, with a TTL
//	cred:<sha256 of credential>    the instance id a credential belongs to; dropped at deletion
//	credof:<instance id>           that digest, so deletion finds what to drop
//	open:<instance id>             the ids of the instance's requests that may still be pending (a set)
//	req:<id>                       a request as submitted (JSON), TTL deadline + Retention
//	dec:<id>                       its decision as first read (JSON), set once, same life
//	idem:inst:<prov>:<key digest>  a provisioning's key, input digest, instance id, sealed credential
//	idem:patch:<prov>:<inst>:<key> an update's key, input digest and its response
//	idem:req:<inst>:<key digest>   a request's key, input digest and request id
//	limit:<kind>:<key>:<minute>    one minute's count (TTL 2 min): create and verify per provisioner, host per receiver host
func instKey(id string) string            { return "inst:" + id }
func credKey(digest string) string        { return "cred:" + digest }
func credOfKey(id string) string          { return "credof:" + id }
func openKey(instance string) string      { return "open:" + instance }
func reqKey(id string) string             { return "req:" + id }
func decKey(id string) string             { return "dec:" + id }
func idemInstKey(prov, key string) string { return "idem:inst:" + prov + ":" + keyDigest(key) }
func idemPatchKey(prov, inst, key string) string {
	return "idem:patch:" + prov + ":" + inst + ":" + keyDigest(key)
}
func idemReqKey(inst, key string) string { return "idem:req:" + inst + ":" + keyDigest(key) }
func limitKey(kind, key string, minute int64) string {
	return "limit:" + kind + ":" + key + ":" + strconv.FormatInt(minute, 10)
}
