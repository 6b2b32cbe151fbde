// posix_spawn file actions glibc declares only under _GNU_SOURCE, which Swift's Glibc module is
// built without (glibc 2.34 and later have them; Debian 12 has 2.36).
#include <spawn.h>

// Closes every descriptor from `from` up in the child (after the actions added before it).
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
