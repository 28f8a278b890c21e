/**
 * `p.hookUsers`: the hook runner's run-as seam in a multi-user instance (docs/hooks.md, "Who
 * hooks run as"). A hook asked to run as a job's user runs as the uid the manager records
 * for that job (never one a plugin names), through the privileged launcher; root hooks
 * (perilog) through it too, limited there to the configured commands. A job whose user is
 * the daemon's own runs with the runner's own starter.
 */
import { formatJobId, type JobId } from "../manager/base/ids.js";
import type { ManagerPort } from "../manager/port/port.js";
import type { HookLauncher, HookUsers } from "../hooks/types.js";

/** The seam over `launcher`; `manager` finds each job's user. */
export function launcherHookUsers(launcher: HookLauncher, manager: () => ManagerPort | undefined): HookUsers {
  const self = process.getuid?.() ?? 0;
  return {
    starter(runAs) {
      if (runAs === "root") return self === 0 ? undefined : launcher.hookStarter("", 0);
      const m = manager();
      const job = m?.lookup(runAs.job);
      const f58 = formatJobId(runAs.job);
      if (job === undefined) return `job ${f58} is not active: its hook cannot run as its user`;
      if (job.userid === self || job.userid === m!.owner) return undefined;
      return launcher.hookStarter(f58, job.userid);
    },
  };
}

/** The seam of an isolated plugin in a multi-user instance: the launcher is not reachable from its worker. */
export const ISOLATED_HOOK_USERS: HookUsers = {
  starter: () => "a hook that runs as another user needs an in-process plugin (this one is isolated; docs/hooks.md)",
};
