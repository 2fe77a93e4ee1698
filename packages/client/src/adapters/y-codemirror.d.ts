// y-codemirror 3.0.1 ships types, but its package.json "exports" does not point at them, so NodeNext resolution
// cannot find them. This is the part of its API the CodeMirror adapter uses (src/y-codemirror.js).
declare module 'y-codemirror' {
  import type * as Y from 'yjs';

  export class CodemirrorBinding {
    /** `codeMirror`: a CodeMirror 5 editor. `yUndoManager`: the binding adds itself to its tracked origins. */
    constructor(textType: Y.Text, codeMirror: unknown, awareness?: unknown, options?: { yUndoManager?: Y.UndoManager });
    readonly doc: Y.Doc;
    readonly type: Y.Text;
    destroy(): void;
  }
}
