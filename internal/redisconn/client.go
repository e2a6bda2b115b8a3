package redisconn

import "github.com/redis/go-redis/v9"

// Client is a connection to Redis as Open makes it: one server, a Sentinel
// group or a Cluster. The wiring holds it and hands it to the stores, so
// only they and this package need go-redis itself.
type Client = redis.UniversalClient
