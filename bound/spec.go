package bound

// envSpec carries a bound's description from the process that wraps a
// command to askops run again (Enter). It is removed before the command
// starts.
const envSpec = "ASKOPS_BOUND_SPEC"

// The stages of askops run again.
const (
	// stageInner is askops inside the new namespaces (or none): it builds
	// the bound on itself and execs the command.
	stageInner = "inner"
	// stageOuter starts stageInner with the namespaces and waits for it.
	// It exists because a process that is not dumpable (the agent makes
	// itself so, see agent.hideProcess) cannot write a child's uid_map
	// unless it is root; askops run again is dumpable.
	stageOuter = "outer"
)

// spec is the bound of one command as askops run again reads it.
type spec struct {
	Stage string `json:"stage"`
	// Probe: set the namespaces up and exit 0, running nothing.
	Probe bool `json:"probe,omitempty"`

	Argv []string `json:"argv,omitempty"`
	Dir  string   `json:"dir,omitempty"`

	// Namespaces: the inner stage runs in a new user and mount namespace,
	// and NetNS in a new network namespace too.
	Namespaces bool `json:"namespaces,omitempty"`
	NetNS      bool `json:"netns,omitempty"`
	UID        int  `json:"uid"`
	GID        int  `json:"gid"`

	// Landlock
	ABI int `json:"abi"`
	// Writable: directories and files writable beneath.
	Writable []string `json:"writable,omitempty"`
	// Devices: character devices a command may write (/dev/null…).
	Devices []string `json:"devices,omitempty"`
	// DenyConnect: Landlock refuses every TCP connect.
	DenyConnect bool `json:"deny_connect,omitempty"`

	// Mount namespace
	ReadOnly []string `json:"read_only,omitempty"` // each .git
	Hide     []string `json:"hide,omitempty"`      // each denied file
	HideFile string   `json:"hide_file,omitempty"` // an unreadable empty file
	HideDir  string   `json:"hide_dir,omitempty"`  // an unreadable empty directory
}
