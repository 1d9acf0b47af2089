import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (Linux: 100). */
const TICKS_PER_SECOND = 100;

/**
 * CPU (user + system, ms) used so far by this machine's PostgreSQL processes (those named
 * `postgres`), from /proc; undefined where /proc is not readable (not Linux). The bench runs
 * PostgreSQL on the same machine, so the difference across a timed drain is what the database
 * spent on it. Backends that exit during the window drop their share: the scenarios keep their
 * pools open across it. Resolution is one tick (10 ms) per process.
 */
export function postgresCpuMs(): number | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  let ticks = 0;
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    const close = stat.lastIndexOf(')');
    if (stat.slice(stat.indexOf('(') + 1, close) !== 'postgres') continue;
    const fields = stat.slice(close + 2).split(' ');
    // After the command: state is field 3, utime 14 and stime 15 (1-based over the whole line).
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}
