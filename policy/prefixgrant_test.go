package policy
