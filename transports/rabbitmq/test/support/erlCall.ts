/**
 * The shared RabbitMQ node's unacked counts through `erl_call`, Erlang's C client: about 20 ms of
 * CPU a call where rabbitmqctl boots an Erlang VM (about 1 s of CPU), which made polls of it one
 * of the test run's larger costs. It needs the node's cookie (readable by root or the rabbitmq
 * user) and erl_call from the Erlang installation; where either is missing, or the call fails, it
 * answers null and the caller asks rabbitmqctl, as before (and this process stops trying).
 */
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

const ERLANG_ROOT = '/usr/lib/erlang';
const COOKIE_FILE = '/var/lib/rabbitmq/.erlang.cookie';
const CALL_DEADLINE_MS = 10_000;

/** Queue names hex-encoded (any byte a name may hold), one `<hex>\t<count>` line per queue of vhost /. */
const UNACKED_EXPRESSION =
  'lists:flatten([io_lib:format("~s\\t~p~n", [binary:encode_hex(element(4, proplists:get_value(name, I))), ' +
  'proplists:get_value(messages_unacknowledged, I)]) || I <- rabbit_amqqueue:info_all(<<"/">>, [name, messages_unacknowledged])]).';

let usable = true;

function erlCallBinary(): string | null {
  try {
    const erts = readdirSync(ERLANG_ROOT).find((entry) => entry.startsWith('erts-'));
    return erts === undefined ? null : path.join(ERLANG_ROOT, erts, 'bin', 'erl_call');
  } catch {
    return null;
  }
}

/** Unacked deliveries by queue name (vhost /), or null when erl_call cannot answer here. */
export async function unackedByQueue(): Promise<Map<string, number> | null> {
  if (!usable) return null;
  try {
    const binary = erlCallBinary();
    if (binary === null) throw new Error('no erl_call');
    const cookie = readFileSync(COOKIE_FILE, 'utf8').trim();
    const node = process.env.RABBITMQ_NODENAME?.split('@')[0] ?? 'rabbit';
    const child = run(binary, ['-sname', node, '-c', cookie, '-e'], { timeout: CALL_DEADLINE_MS });
    child.child.stdin?.end(`${UNACKED_EXPRESSION}\n`);
    const { stdout } = await child;
    const answer = /^\{ok,\s*"((?:[0-9A-F]*\\t\d+\\n)*)"\}\s*$/.exec(stdout.trim());
    if (answer === null) throw new Error(`unexpected erl_call answer: ${stdout.slice(0, 200)}`);
    const counts = new Map<string, number>();
    for (const line of answer[1]!.split('\\n')) {
      if (line === '') continue;
      const [hex, count] = line.split('\\t') as [string, string];
      counts.set(Buffer.from(hex, 'hex').toString('utf8'), Number(count));
    }
    return counts;
  } catch {
    usable = false;
    return null;
  }
}
