/**
 * A Yjs v1 update decoded whole, before anything applies it. `Y.applyUpdate` integrates an update's structs before it
 * reads its delete set, so bytes cut short there leave the structs applied and throw; and it ignores bytes after the
 * update's end (yjs `readUpdateV2`). The server decodes what a client sends this way (RELIABILITY.md S9, S19) and
 * the client what the server sends (R10): what does not decode whole is refused before it touches a document.
 */
import * as Y from 'yjs';

export interface WholeUpdate {
  structs: Array<Y.Item | Y.GC | Y.Skip>;
  ds: { clients: Map<number, Array<{ clock: number; len: number }>> };
}

/**
 * Yjs' v1 update decoder, remembering the last one made: `Y.decodeUpdateV2` takes a decoder class, and the position
 * its byte reader reached tells where the update ended. Decoding is synchronous, so `last` is the current one.
 */
class EndTrackingDecoder extends Y.UpdateDecoderV1 {
  static last: EndTrackingDecoder | undefined;
  constructor(decoder: ConstructorParameters<typeof Y.UpdateDecoderV1>[0]) {
    super(decoder);
    EndTrackingDecoder.last = this;
  }
}

/**
 * `Y.decodeUpdate`, refusing bytes after the update's end. Throws an `Error` naming what is wrong: Yjs' own decoder
 * error for bytes cut short or malformed (e.g. "Unexpected end of array"), or "N bytes after its end".
 */
export function decodeWholeUpdate(update: Uint8Array): WholeUpdate {
  EndTrackingDecoder.last = undefined;
  let decoded: WholeUpdate;
  try {
    decoded = Y.decodeUpdateV2(update, EndTrackingDecoder as unknown as typeof Y.UpdateDecoderV2) as unknown as WholeUpdate;
  } catch (error) {
    EndTrackingDecoder.last = undefined;
    throw new Error(`update does not decode: ${(error as Error).message}`);
  }
  const reader = EndTrackingDecoder.last as unknown as { restDecoder: { pos: number } } | undefined;
  EndTrackingDecoder.last = undefined;
  const end = reader?.restDecoder.pos ?? update.length;
  if (end !== update.length) throw new Error(`update has ${update.length - end} bytes after its end`);
  return decoded;
}
