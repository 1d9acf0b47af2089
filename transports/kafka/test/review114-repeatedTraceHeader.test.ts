/**
 * Review 114 (from review 111): Kafka lets a header name repeat. Of a repeated `traceparent` (or
 * `tracestate`) the last value was kept even when it was malformed and an earlier one valid (a
 * proxy appending its own broken copy), and the trace was lost; across names of other cases the
 * rule of replacesTraceValue (a valid value over a malformed one) already chose. It chooses among
 * the repeats of one name now too; of any other header the last value is kept, as before.
 */
import { decodeHeaders } from '../src/wire';

const VALID = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const OTHER_VALID = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('decodeHeaders: a trace header given more than once', () => {
  it('keeps a valid traceparent over a malformed later repeat', () => {
    expect(decodeHeaders({ traceparent: [Buffer.from(VALID), Buffer.from('garbage')] }).traceparent).toBe(
      VALID,
    );
  });

  it('keeps a valid traceparent over a malformed earlier repeat', () => {
    expect(decodeHeaders({ traceparent: ['00-zz', VALID] }).traceparent).toBe(VALID);
  });

  it('keeps the last of two valid repeats, as for any header', () => {
    expect(decodeHeaders({ traceparent: [VALID, OTHER_VALID] }).traceparent).toBe(OTHER_VALID);
  });

  it('keeps a valid tracestate over a malformed repeat', () => {
    expect(decodeHeaders({ tracestate: ['vendor=1', 'Bad Value=\u0007'] }).tracestate).toBe('vendor=1');
  });

  it('chooses across repeats and other cases of the name alike', () => {
    const headers = decodeHeaders({ Traceparent: [VALID], traceparent: ['', 'nope'] });
    expect(headers.traceparent).toBe(VALID);
    expect(Object.keys(headers)).toEqual(['traceparent']);
  });

  it('keeps the last value of any other repeated header', () => {
    expect(decodeHeaders({ 'x-region': ['eu', 'us'] })['x-region']).toBe('us');
  });
});
