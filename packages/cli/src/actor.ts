import { hostname, userInfo } from 'node:os';

/** --actor, else FERRY_ACTOR, else `cli:<os user>@<host>`: who the audit trail names. */
export function actorOf(explicit: string | undefined, env: NodeJS.ProcessEnv): string {
  if (explicit !== undefined) return explicit;
  if (env.FERRY_ACTOR) return env.FERRY_ACTOR;
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // no passwd entry (containers): keep 'unknown'
  }
  return `cli:${user}@${hostname()}`;
}
