// The y-websocket stack as its READMEs wire it, for the keystroke benchmark: Quill 2 + y-quill + quill-cursors, or
// CodeMirror 5 + y-codemirror, over y-websocket to the reference server. Same editor options as Wave's demo pages.
// Query: ?editor=quill|codemirror&ws=ws://HOST:PORT&doc=ID
import * as Y from 'yjs';
import { WebsocketProvider } from 'y-websocket';
import { QuillBinding } from 'y-quill';
import QuillCursors from 'quill-cursors';
import { CodemirrorBinding } from 'y-codemirror';

const params = new URLSearchParams(location.search);
const doc = new Y.Doc();
const provider = new WebsocketProvider(params.get('ws'), params.get('doc'), doc);
provider.awareness.setLocalStateField('user', { name: 'bench', color: '#1f77b4' });

if (params.get('editor') === 'quill') {
  window.Quill.register('modules/cursors', QuillCursors);
  const quill = new window.Quill('#editor', {
    theme: 'snow',
    placeholder: 'Start typing…',
    modules: {
      cursors: true,
      toolbar: [[{ header: [1, 2, false] }], ['bold', 'italic', 'underline'], [{ list: 'ordered' }, { list: 'bullet' }], ['link', 'clean']],
      history: { userOnly: true },
    },
  });
  new QuillBinding(doc.getText('quill'), quill, provider.awareness);
  window.quill = quill;
} else {
  const cm = window.CodeMirror(document.getElementById('editor'), { value: '', mode: 'javascript', lineNumbers: true, lineWrapping: true });
  new CodemirrorBinding(doc.getText('codemirror'), cm, provider.awareness);
  window.cm = cm;
}
window.peerStarted = new Promise((resolve) => {
  if (provider.synced) resolve();
  else provider.once('sync', () => resolve());
});
