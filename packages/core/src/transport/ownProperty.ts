/**
 * Sets `target[key]` to `value` as an own, writable, configurable property, whatever the key:
 * `target['__proto__'] = value` sets no property at all (it replaces the prototype, or does
 * nothing for a value that is no object), so a header, attribute or field of that name was
 * silently lost; and a name the prototype also has (`constructor`, `toString`) is read back as
 * the prototype's unless it is an own property. Enumerable unless `enumerable` is false (a copy
 * keeps a non-enumerable field, such as an Error's `message`, as it was).
 */
export function setOwnProperty<V>(
  target: { [key: PropertyKey]: V },
  key: PropertyKey,
  value: V,
  enumerable = true,
): void {
  Object.defineProperty(target, key, { value, enumerable, writable: true, configurable: true });
}
