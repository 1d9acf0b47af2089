/**
 * The shared RabbitMQ node asked through `erl_call`, Erlang's C client: about 20 ms of CPU a call
 * where rabbitmqctl boots an Erlang VM (about 1 s of CPU), which made polls of it one of the test
 * run's larger costs. It needs the node's cookie (readable by root or the rabbitmq user) and
 * erl_call from the Erlang installation; where either is missing, or a call fails, it answers
 * null and the caller asks rabbitmqctl, as before (and this process stops trying).
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

/**
 * Closes (as rabbitmqctl close_connection does) every connection whose client property
 * connection_name is the hex-encoded `hex`; answers how many, as `"<n>"`.
 */
const closeNamedExpression = (hex: string, reason: string) =>
  `Name = binary:decode_hex(<<"${hex}">>), ` +
  `Ours = [proplists:get_value(pid, I) || I <- rabbit_networking:connection_info_all([pid, client_properties]), ` +
  `lists:keyfind(<<"connection_name">>, 1, proplists:get_value(client_properties, I)) =:= {<<"connection_name">>, longstr, Name}], ` +
  `[rabbit_networking:close_connection(P, "${reason}") || P <- Ours], integer_to_list(length(Ours)).`;

let usable = true;

function erlCallBinary(): string | null {
  try {
    const erts = readdirSync(ERLANG_ROOT).find((entry) => entry.startsWith('erts-'));
    return erts === undefined ? null : path.join(ERLANG_ROOT, erts, 'bin', 'erl_call');
  } catch {
    return null;
  }
}

/** The string `expression` evaluates to on the node (its `\t` and `\n` escapes left as written), or null. */
async function evaluate(expression: string): Promise<string | null> {
  if (!usable) return null;
  try {
    const binary = erlCallBinary();
    if (binary === null) throw new Error('no erl_call');
    const cookie = readFileSync(COOKIE_FILE, 'utf8').trim();
    const node = process.env.RABBITMQ_NODENAME?.split('@')[0] ?? 'rabbit';
    const child = run(binary, ['-sname', node, '-c', cookie, '-e'], { timeout: CALL_DEADLINE_MS });
    child.child.stdin?.end(`${expression}\n`);
    const { stdout } = await child;
    const answer = /^\{ok,\s*"([^"]*)"\}$/.exec(stdout.trim());
    if (answer === null) throw new Error(`unexpected erl_call answer: ${stdout.slice(0, 200)}`);
    return answer[1]!;
  } catch {
    usable = false;
    return null;
  }
}

/** Unacked deliveries by queue name (vhost /), or null when erl_call cannot answer here. */
export async function unackedByQueue(): Promise<Map<string, number> | null> {
  const text = await evaluate(UNACKED_EXPRESSION);
  if (text === null) return null;
  const counts = new Map<string, number>();
  for (const line of text.split('\\n')) {
    if (line === '') continue;
    const [hex, count] = line.split('\\t') as [string, string];
    counts.set(Buffer.from(hex, 'hex').toString('utf8'), Number(count));
  }
  return counts;
}

/** Closes from the broker side every connection named `name`: how many, or null when erl_call cannot answer here. */
export async function closeNamedConnections(name: string, reason: string): Promise<number | null> {
  const hex = Buffer.from(name, 'utf8').toString('hex').toUpperCase();
  const text = await evaluate(closeNamedExpression(hex, reason.replace(/["\\]/g, '')));
  return text === null ? null : Number(text);
}
