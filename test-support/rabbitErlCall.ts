/**
 * A RabbitMQ node of this machine asked through `erl_call`, Erlang's C client: about 20 ms of CPU
 * a call where rabbitmqctl boots an Erlang VM (about 1 s of CPU), which made polls of it and the
 * suites' set-up calls one of the test run's larger costs. It needs the nodes' cookie (the
 * rabbitmq user's, readable by root or that user: the shared node and the fault suites' private
 * nodes, which run as that user, share it) and erl_call from the Erlang installation. Where either
 * is missing, every call answers null; where one call fails (a node down, a refused connection),
 * that call answers null. Either way the caller asks rabbitmqctl, as before.
 */
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

const ERLANG_ROOT = '/usr/lib/erlang';
const COOKIE_FILE = '/var/lib/rabbitmq/.erlang.cookie';
const CALL_DEADLINE_MS = 10_000;

/** The shared node's name (`rabbit`, or RABBITMQ_NODENAME's), as erl_call's `-sname` takes it. */
export function sharedNode(): string {
  return process.env.RABBITMQ_NODENAME?.split('@')[0] ?? 'rabbit';
}

/** An Erlang binary holding `text`, any bytes, hex-encoded in the expression. */
export function erlBinary(text: string): string {
  return `binary:decode_hex(<<"${Buffer.from(text, 'utf8').toString('hex').toUpperCase()}">>)`;
}

/** Queue names hex-encoded (any byte a name may hold), one `<hex>\t<count>` line per queue of vhost /. */
const UNACKED_EXPRESSION =
  'lists:flatten([io_lib:format("~s\\t~p~n", [binary:encode_hex(element(4, proplists:get_value(name, I))), ' +
  'proplists:get_value(messages_unacknowledged, I)]) || I <- rabbit_amqqueue:info_all(<<"/">>, [name, messages_unacknowledged])]).';

/**
 * Closes (as rabbitmqctl close_connection does) every connection whose client property
 * connection_name is `name`; answers how many, as `"<n>"`.
 */
const closeNamedExpression = (name: string, reason: string) =>
  `Name = ${erlBinary(name)}, ` +
  `Ours = [proplists:get_value(pid, I) || I <- rabbit_networking:connection_info_all([pid, client_properties]), ` +
  `lists:keyfind(<<"connection_name">>, 1, proplists:get_value(client_properties, I)) =:= {<<"connection_name">>, longstr, Name}], ` +
  `[rabbit_networking:close_connection(P, "${reason.replace(/["\\]/g, '')}") || P <- Ours], integer_to_list(length(Ours)).`;

/** erl_call and the cookie, once found; null where this machine lacks either. */
let tools: { binary: string; cookie: string } | null | undefined;

function erlCallTools(): { binary: string; cookie: string } | null {
  if (tools !== undefined) return tools;
  try {
    const erts = readdirSync(ERLANG_ROOT).find((entry) => entry.startsWith('erts-'));
    if (erts === undefined) throw new Error('no erts');
    const cookie = readFileSync(COOKIE_FILE, 'utf8').trim();
    tools = { binary: path.join(ERLANG_ROOT, erts, 'bin', 'erl_call'), cookie };
  } catch {
    tools = null;
  }
  return tools;
}

/**
 * The string `expression` evaluates to on `node` (a short name, or `name@host`; its `\t` and
 * `\n` escapes left as written), or null when erl_call cannot ask it.
 */
export async function evaluateOn(node: string, expression: string): Promise<string | null> {
  const found = erlCallTools();
  if (found === null) return null;
  try {
    const child = run(found.binary, ['-sname', node, '-c', found.cookie, '-e'], {
      timeout: CALL_DEADLINE_MS,
    });
    // erl_call may exit before it reads its input (a node it cannot reach): the write then fails
    // with EPIPE on the stream, an error of this call only (its exit is the answer, below).
    child.child.stdin?.on('error', () => undefined);
    child.child.stdin?.end(`${expression}\n`);
    const { stdout } = await child;
    const answer = /^\{ok,\s*"([^"]*)"\}$/.exec(stdout.trim());
    return answer === null ? null : answer[1]!;
  } catch {
    return null;
  }
}

/**
 * Runs `call`, an Erlang expression that answers `ok` on success (rabbit_vhost:add(...), ...), on
 * `node`: true once it answered ok, null when erl_call cannot ask the node; any other answer
 * throws, naming it.
 */
export async function adminCall(node: string, call: string): Promise<true | null> {
  const text = await evaluateOn(node, `R = (${call}), lists:flatten(io_lib:format("~p", [R])).`);
  if (text === null) return null;
  if (text !== 'ok') throw new Error(`${node}: ${call.slice(0, 120)} answered ${text.slice(0, 300)}`);
  return true;
}

/** Unacked deliveries by queue name (vhost /) on `node`, or null when erl_call cannot answer here. */
export async function unackedByQueue(node = sharedNode()): Promise<Map<string, number> | null> {
  const text = await evaluateOn(node, UNACKED_EXPRESSION);
  if (text === null) return null;
  const counts = new Map<string, number>();
  for (const line of text.split('\\n')) {
    if (line === '') continue;
    const [hex, count] = line.split('\\t') as [string, string];
    counts.set(Buffer.from(hex, 'hex').toString('utf8'), Number(count));
  }
  return counts;
}

/** Closes from the shared node's side every connection named `name`: how many, or null when erl_call cannot answer here. */
export async function closeNamedConnections(name: string, reason: string): Promise<number | null> {
  const text = await evaluateOn(sharedNode(), closeNamedExpression(name, reason));
  return text === null ? null : Number(text);
}
