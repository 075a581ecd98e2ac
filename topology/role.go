package topology

// Role is what a node runs.
type Role string

const (
	RoleRedis    Role = "redis"
	RoleSentinel Role = "sentinel"
	// RoleResource holds the data a lock protects, outside the lock service.
	RoleResource Role = "resource"
)

// ResourceName is the resource node's name.
const ResourceName = "resource"
