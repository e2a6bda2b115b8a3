package fakeslack

import (
	"slices"
	"strings"
)

// SetUserGroupHandle names a user group (its @handle, without the @) for
// usergroups.list; a group without one is listed with its id in lowercase.
func (s *Server) SetUserGroupHandle(id, handle string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handles == nil {
		s.handles = map[string]string{}
	}
	s.handles[id] = handle
}

// userGroupsListLocked answers usergroups.list as Slack does: every group
// of the team with its id, handle and name, and its members only with
// include_users=true.
func (s *Server) userGroupsListLocked(req *apiRequest, _ *Call) answer {
	withUsers := req.param("include_users") == "true"
	ids := make([]string, 0, len(s.groups))
	for id := range s.groups {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	groups := make([]map[string]any, 0, len(ids))
	for _, id := range ids {
		handle := s.handles[id]
		if handle == "" {
			handle = strings.ToLower(id)
		}
		g := map[string]any{
			"id": id, "team_id": s.opts.TeamID, "is_usergroup": true, "is_subteam": true,
			"name": handle, "description": "", "handle": handle, "is_external": false,
			"date_create": 1446598059, "date_update": 1446598059, "date_delete": 0,
			"auto_type": nil, "created_by": "U060RNRCZ", "updated_by": "U060RNRCZ", "deleted_by": nil,
			"prefs":      map[string]any{"channels": []string{}, "groups": []string{}},
			"user_count": len(s.groups[id]),
		}
		if withUsers {
			g["users"] = append([]string{}, s.groups[id]...)
		}
		groups = append(groups, g)
	}
	return okAnswer(map[string]any{"usergroups": groups})
}
