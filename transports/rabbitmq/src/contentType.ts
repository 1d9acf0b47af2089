/**
 * Why a delivery's AMQP content type is not accepted, or null: its media type (lower-cased,
 * parameters aside) must be one of `contentTypes` (or absent, when `acceptMissing`), and a
 * `charset` parameter, with a media type or without, must name UTF-8. ferry reads every body as
 * UTF-8: a body declared in another charset whose bytes happen to be valid UTF-8 (Latin-1 `Ã©` is
 * the bytes of `é`) would be accepted with other text than the producer sent.
 */
export function contentTypeFault(
  contentType: string | undefined,
  contentTypes: readonly string[],
  acceptMissing: boolean,
): string | null {
  const [media = '', ...parameters] = (contentType ?? '').split(';');
  const type = media.trim().toLowerCase();
  if (type === '') {
    if (!acceptMissing) return 'no content type';
  } else if (!contentTypes.includes(type)) return `content type ${type} is not accepted`;
  // Read with a media type or without (`; charset=iso-8859-1` is taken as no media type, never as
  // no charset: review 87).
  for (const parameter of parameters) {
    const equals = parameter.indexOf('=');
    if (equals < 0 || parameter.slice(0, equals).trim().toLowerCase() !== 'charset') continue;
    const charset = unquote(parameter.slice(equals + 1).trim()).toLowerCase();
    if (charset !== 'utf-8' && charset !== 'utf8') {
      return `charset ${charset} is not accepted: ferry reads bodies as UTF-8`;
    }
  }
  return null;
}

function unquote(value: string): string {
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
}

/**
 * Why an entry of the `contentTypes` option could never match a delivery, or null: a delivery's
 * content type is compared as its media type alone, trimmed (contentTypeFault), so an entry with
 * parameters or whitespace (`application/json; charset=utf-8`) matched none and every delivery
 * was dead-lettered `unsupported_content_type`.
 */
export function contentTypeOptionFault(contentType: string): string | null {
  if (!/[\s;]/.test(contentType)) return null;
  return (
    `${JSON.stringify(contentType)} can match no delivery: list media types alone, without` +
    ' parameters or spaces (a delivery is compared without its parameters; a charset other than UTF-8 is refused apart)'
  );
}
