/**
 * The browser's ways of asking for undo and redo, for adapters whose editor has no history module of its own to
 * reroute (the textarea; contenteditable editors). Editors with one (Quill, CodeMirror) are rerouted in their adapter.
 */

export type HistoryAction = 'undo' | 'redo';

/**
 * Ctrl/Cmd+Z → undo; Ctrl/Cmd+Shift+Z and Ctrl/Cmd+Y → redo; anything else (or a key pressed while an IME
 * composition is open) → null. Layouts without Latin letters report another `key`; `code` names the physical key.
 */
export function historyKey(event: KeyboardEvent): HistoryAction | null {
  if (event.isComposing || event.altKey || !(event.ctrlKey || event.metaKey)) return null;
  const key = /^[a-z]$/i.test(event.key) ? event.key.toLowerCase() : event.code === 'KeyZ' ? 'z' : event.code === 'KeyY' ? 'y' : '';
  if (key === 'z') return event.shiftKey ? 'redo' : 'undo';
  if (key === 'y' && !event.shiftKey) return 'redo';
  return null;
}

/** The Edit menu, the context menu and some IMEs ask through `beforeinput` instead of keys. */
export function historyInput(event: InputEvent): HistoryAction | null {
  if (event.inputType === 'historyUndo') return 'undo';
  if (event.inputType === 'historyRedo') return 'redo';
  return null;
}

/**
 * Where the caret belongs after an undo or redo changed the text with `delta` (a Yjs text delta): right after the
 * last text it put back, or where it removed text, as editors place it after their own undo.
 */
export function caretAfterHistory(delta: ReadonlyArray<{ insert?: unknown; retain?: number; delete?: number }>): number | null {
  let index = 0;
  let caret: number | null = null;
  for (const op of delta) {
    if (op.retain !== undefined) index += op.retain;
    else if (op.insert !== undefined) {
      index += typeof op.insert === 'string' ? op.insert.length : 1;
      caret = index;
    } else if (op.delete !== undefined) caret = index;
  }
  return caret;
}
