/**
 * A parser of the Prometheus text exposition format (0.0.4) for tests: every sample with its
 * labels, and each metric family's TYPE and HELP. Throws on a line it cannot read, so a
 * malformed scrape fails the test that reads it.
 */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Scrape {
  readonly samples: readonly Sample[];
  readonly types: ReadonlyMap<string, string>;
  readonly help: ReadonlyMap<string, string>;
  /** The value of the sample `name` whose labels include `labels`; undefined when there is none, throws when several match. */
  value(name: string, labels?: Readonly<Record<string, string>>): number | undefined;
  /** Every sample of `name` whose labels include `labels`. */
  find(name: string, labels?: Readonly<Record<string, string>>): Sample[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})?\\s+(\\S+)(?:\\s+-?\\d+)?$`);
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/y;

function unescape(value: string): string {
  return value.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
}

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const match = LABEL.exec(text);
    if (!match) throw new Error(`unreadable labels in: ${line}`);
    labels[match[1] as string] = unescape(match[2] as string);
  }
  return labels;
}

function parseValue(text: string, line: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  const value = Number(text);
  if (Number.isNaN(value)) throw new Error(`unreadable value in: ${line}`);
  return value;
}

export function parsePrometheusText(text: string): Scrape {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const meta = /^# (TYPE|HELP) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      (meta[1] === 'TYPE' ? types : help).set(meta[2] as string, meta[3] as string);
      continue;
    }
    if (line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`unreadable sample line: ${line}`);
    samples.push({
      name: match[1] as string,
      labels: match[2] ? parseLabels(match[2], line) : {},
      value: parseValue(match[3] as string, line),
    });
  }
  const find = (name: string, labels: Readonly<Record<string, string>> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return {
    samples,
    types,
    help,
    find,
    value(name, labels) {
      const found = find(name, labels);
      if (found.length > 1)
        throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
      return found[0]?.value;
    },
  };
}

/** GETs `url` and parses the body; fails unless it is a 200 in the Prometheus text content type. */
export async function scrape(url: string): Promise<Scrape> {
  const response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  const body = await response.text();
  if (response.status !== 200) throw new Error(`GET ${url}: ${response.status} ${body}`);
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith('text/plain; version=0.0.4')) throw new Error(`GET ${url}: content type ${type}`);
  return parsePrometheusText(body);
}
