export {
  ERROR_CODES,
  isErrorCode,
  CloseCode,
  SERVER_ERRORS,
  LIMIT_ERRORS,
  errorCodeForClose,
} from './errors.js';
export type { ErrorCode, ServerErrorCode, CloseCodeValue } from './errors.js';
export {
  PROTOCOL_VERSION,
  MessageType,
  SyncStep,
  MAX_JSON_PAYLOAD,
  MAX_TOKEN_LENGTH,
  ProtocolError,
  encodeMessage,
  decodeMessage,
  isUpdateBearing,
} from './messages.js';
export { parseJsonSafely } from './json.js';
export { decodeWholeUpdate } from './whole-update.js';
export type { WholeUpdate } from './whole-update.js';
export { DOC_FORMAT, TEXT_TYPE, META_MAP, META_REPLACED_KEY } from './doc-names.js';
export type { Message, SyncMessage, HelloPayload, WelcomePayload, ErrorPayload, MessageTypeValue } from './messages.js';
export {
  PALETTE,
  STAMPED_FIELDS,
  MAX_AWARENESS_STATE,
  isCssColor,
  isCssColorWith,
  isSafeUrl,
  sanitizeUser,
  pickColor,
  stampAwarenessUpdate,
} from './presence.js';
export type { UserInput, UserIdentity, StampedPresence } from './presence.js';
