import { stripUrlCredentials } from '../redact/urlCredentials';

/**
 * Bounds on the values a metric label or a span name takes. They come from data as well as from
 * configuration (a destination or event type an event names, a consumer a delivery names, a
 * third party transport's reason), so none is trusted to be a small set: each label name (each
 * span operation) takes at most `max` distinct values, the first seen, and later ones are
 * refused (a label: OVERFLOW_LABEL; a span: its operation alone). A label of a closed set takes
 * OVERFLOW_LABEL for a value outside it.
 */

/** The value a label takes once its bound is reached, or for a value outside its closed set. */
export const OVERFLOW_LABEL = 'other';

/** `value` while it is one of the first `max` distinct values given, else undefined. */
export type FirstValues = (value: string) => string | undefined;

export function firstValues(max: number): FirstValues {
  const kept = new Set<string>();
  const admits = capacity(max);
  return (value) => {
    if (kept.has(value)) return value;
    if (!admits(kept.size)) return undefined;
    kept.add(value);
    return value;
  };
}

/**
 * The bound of a collection kept per observer-supplied value (a label's values, the partitions
 * of a lag series, the consumers of a source): `admits(size)` is whether a collection of `size`
 * entries takes one more (`size < max`); the first refusal calls `onFull` (once: a caller says
 * there that values past the bound are folded or dropped).
 */
export function capacity(max: number, onFull: () => void = () => undefined): (size: number) => boolean {
  let said = false;
  return (size) => {
    if (size < max) return true;
    if (!said) {
      said = true;
      onFull();
    }
    return false;
  };
}

/** One FirstValues of `max` per name (a label name, a span operation), made on first use. */
export function firstValuesByName(max: number): (name: string) => FirstValues {
  const byName = new Map<string, FirstValues>();
  return (name) => {
    let values = byName.get(name);
    if (!values) {
      values = firstValues(max);
      byName.set(name, values);
    }
    return values;
  };
}

/** A label's value: the bounded `value` (any value, as text), OVERFLOW_LABEL past the bound. */
export type LabelBound = (value: unknown) => string;

/**
 * `value` as a label's text (String), or null when it has none: an object whose toString throws
 * or that has none (no prototype). Observers never throw (review 105: such a label value threw
 * out of every metrics observer, and the event was not counted).
 */
export function labelText(value: unknown): string | null {
  try {
    return String(value);
  } catch {
    return null;
  }
}

/**
 * Each label name's LabelBound: `max` distinct values (one that cannot be read as text is
 * OVERFLOW_LABEL), shared by every metric with that label,
 * each without a URL's user and password (a third party's transport may name its queue by a URL
 * holding them; every scrape would serve them).
 */
export function labelBounds(max: number): (labelName: string) => LabelBound {
  const byName = firstValuesByName(max);
  return (labelName) => {
    const values = byName(labelName);
    return (value) => {
      const text = labelText(value);
      return (text === null ? undefined : values(stripUrlCredentials(text))) ?? OVERFLOW_LABEL;
    };
  };
}

/** A label of a closed set: `value` when it is one of `allowed`, else OVERFLOW_LABEL. */
export function closedSet(allowed: readonly string[]): LabelBound {
  const set: ReadonlySet<string> = new Set(allowed);
  return (value) => (typeof value === 'string' && set.has(value) ? value : OVERFLOW_LABEL);
}
