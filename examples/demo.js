// Shared logic of the Wave demo pages. One module for every page (`<body data-demo="…">`), so the pages carry no
// inline script and run under a strict CSP (`script-src 'self'`).
//
// Query string: `doc` (document id, default `demo`), `user` (display name, default a random one) and `text`
// (content the host loads into the editor before starting, as if from its own database: it seeds the document
// when no session is live, and is replaced by the session's content otherwise). Presence: `email`, `color`, `avatar`
// (the user's), `pointers=0`, `shape=`, `labels=1`, `avatars=left,vertical`, `ui=0`, `cursors=0` (see presenceOptions).
//
// For tests the page exposes `window.coedit` (the session), `window.waveLog` (every event payload, as received),
// `window.waveStarted` (the Promise returned by `start`/`init`) and the editor: `window.quill` on the Quill pages,
// `window.cm` on the CodeMirror page.

const FIRST = ['Ada', 'Alan', 'Grace', 'Linus', 'Barbara', 'Ken', 'Margaret', 'Dennis', 'Frances', 'Edsger', 'Radia', 'Niklaus'];
const LAST = ['Otter', 'Heron', 'Lynx', 'Badger', 'Wren', 'Marten', 'Ibis', 'Puffin', 'Stoat', 'Kestrel'];
const EVENTS = ['content_changed', 'users_update', 'status', 'error', 'access_changed'];

const pick = (list) => list[crypto.getRandomValues(new Uint32Array(1))[0] % list.length];
const randomName = () => `${pick(FIRST)} ${pick(LAST)}`;
const randomDocId = () => `doc-${crypto.randomUUID().slice(0, 8)}`;
const $ = (id) => document.getElementById(id);

const demo = document.body.dataset.demo;
if (demo === 'index') fillIndexLinks();
else if (demo === 'froala' || demo === 'tinymce') runRichTextDemo(demo);
else if (demo === 'any-editor') runAnyEditorDemo();
else runEditorDemo(demo);

/** The index page: every link opens its demo on one fresh document, with a random user name. */
function fillIndexLinks() {
  const doc = randomDocId();
  for (const link of document.querySelectorAll('a[data-page]')) {
    const query = new URLSearchParams({ doc, user: randomName() });
    link.href = `${link.dataset.page}?${query}`;
  }
  $('doc').textContent = doc;
}

/** What every editor page does first: read the query, show who you are and the share link, start the event log. */
function setUpPage() {
  const params = new URLSearchParams(location.search);
  const docId = params.get('doc') || 'demo';
  const userName = params.get('user') || randomName();
  const initialText = params.get('text');
  $('me').textContent = userName;
  // The share link names the document but not the user, so the second window picks its own name.
  const share = new URL(location.pathname, location.origin);
  share.searchParams.set('doc', docId);
  $('share').href = share.href;
  $('share').textContent = share.href;
  const waveLog = Object.fromEntries(EVENTS.map((name) => [name, []]));
  window.waveLog = waveLog;
  return { params, docId, userName, initialText, waveLog };
}

function runEditorDemo(kind) {
  const { params, docId, userName, initialText, waveLog } = setUpPage();

  // Editor first, session second: Quill must be fully initialised before it is handed to Wave.
  const editor =
    kind === 'quill' || kind === 'quill-provider' ? createQuill(initialText)
    : kind === 'codemirror' ? createCodeMirror(initialText)
    : createTextarea(initialText);

  // The Quill provider page gets `Coedit` from `import Coedit from 'wave-quill-provider'` (dist/quill-provider.js).
  const Coedit = kind === 'quill-provider' ? window.WaveQuillProvider?.Coedit : window.Coedit;
  if (typeof Coedit !== 'function') {
    const script = kind === 'quill-provider' ? 'dist/quill-provider.js (built by npm run build)' : 'wave.client.js';
    showError({ code: 'script_missing', detail: `${script} did not load (is the Wave server running?)`, fatal: true });
    window.waveStarted = Promise.reject(new Error('Coedit is not defined'));
    window.waveStarted.catch(() => {});
    return;
  }

  const coedit = new Coedit();
  window.coedit = coedit;
  for (const name of EVENTS) coedit.on(name, (payload) => waveLog[name].push(payload));
  coedit.on('status', renderStatus);
  coedit.on('users_update', renderUsers);
  coedit.on('error', showError);

  window.waveStarted = loadConfig().then(({ apiKey, serverUrl, token }) => {
    // `token` only when a test serves one (README "Security"); the demo key needs none.
    const config = { docId, apiKey, serverUrl, user: userFrom(params, userName), ...presenceOptions(params), ...(token ? { token } : {}) };
    // The documented usage per editor: `start(config)` for a textarea and CodeMirror, `init(config)` for Quill,
    // `start(config)` (no `app`: the package is Quill only) for the Quill provider.
    switch (kind) {
      case 'quill': return coedit.init({ ...config, app: 'editorC', editor });
      case 'quill-provider': return coedit.start({ ...config, editor });
      case 'codemirror': return coedit.start({ ...config, app: 'editorB', editor });
      default: return coedit.start({ ...config, app: 'text', editor });
    }
  });
  window.waveStarted.catch((err) => showError(err));
}

function createTextarea(initialText) {
  const textarea = $('editor');
  if (initialText != null) textarea.value = initialText;
  return textarea;
}

function createCodeMirror(initialText) {
  const cm = CodeMirror($('editor'), {
    value: initialText ?? '',
    mode: 'javascript',
    lineNumbers: true,
    lineWrapping: true,
  });
  window.cm = cm;
  return cm;
}

function createQuill(initialText, selector = '#editor') {
  const quill = new Quill(selector, {
    theme: 'snow',
    placeholder: 'Start typing…',
    modules: { toolbar: [[{ header: [1, 2, false] }], ['bold', 'italic', 'underline'], [{ list: 'ordered' }, { list: 'bullet' }], ['link', 'clean']] },
  });
  if (initialText != null) {
    quill.setText(initialText);
    quill.history.clear(); // the host's content is not an edit the user can undo
  }
  window.quill = quill;
  return quill;
}

/** `user` from the query: `email`, `color` and `avatar` (an image URL) beside the name. */
function userFrom(params, name) {
  const user = { name };
  for (const key of ['email', 'color', 'avatar']) if (params.has(key)) user[key] = params.get(key);
  return user;
}

/**
 * Presence options from the query (API.md config): pointers are on in the demos unless `pointers=0`; `shape`
 * (`arrow`, `hand`, `pointer`, `pointerSolid`), `labels=1` (cursorAlwaysOn), `avatars=left,vertical`,
 * `ui=0` (showUI false), `cursors=0` (showCursor false).
 */
function presenceOptions(params) {
  const options = { showPointer: params.get('pointers') !== '0' };
  if (params.has('shape')) options.pointers = { shape: params.get('shape') };
  if (params.get('labels') === '1') options.cursorAlwaysOn = true;
  if (params.has('avatars')) {
    const where = params.get('avatars');
    options.avatars = { left: where.includes('left'), vertical: where.includes('vertical') };
  }
  if (params.get('ui') === '0') options.showUI = false;
  if (params.get('cursors') === '0') options.showCursor = false;
  return options;
}

async function loadConfig() {
  const response = await fetch('/demo/config.json', { cache: 'no-store' });
  if (!response.ok) throw new Error(`GET /demo/config.json answered ${response.status}`);
  return response.json();
}

function renderStatus({ state, saved, pending }) {
  const status = $('status');
  status.textContent = `${state} · ${saved ? 'saved' : `${pending} unsaved`}`;
  status.dataset.state = state;
  status.dataset.saved = String(saved);
  // A non-fatal error (connection_lost) is over once the session is back online.
  if (state === 'online' && $('error').dataset.fatal !== 'true') $('error').hidden = true;
}

/** The any-editor page's summary line over its sessions' latest `status` payloads, one per panel once reported. */
function renderSessionsStatus(statuses) {
  const panels = document.querySelectorAll('.status[data-for]').length;
  const online = statuses.filter((s) => s.state === 'online').length;
  const unsaved = statuses.filter((s) => !s.saved);
  const pending = unsaved.reduce((sum, s) => sum + s.pending, 0);
  const status = $('status');
  status.textContent = `${online} of ${panels} sessions online · ${unsaved.length === 0 ? 'all saved' : `${pending} unsaved`}`;
  status.dataset.state = online === panels ? 'online' : statuses.find((s) => s.state !== 'online')?.state ?? 'connecting';
  status.dataset.saved = String(unsaved.length === 0);
  if (online === panels && $('error').dataset.fatal !== 'true') $('error').hidden = true;
}

function renderUsers(users) {
  const names = users.map((u) => (u.self ? `${u.user?.name ?? '?'} (you)` : u.user?.name ?? '?'));
  $('users').textContent = `${users.length} here: ${names.join(', ')}`;
}

function showError(error) {
  const box = $('error');
  const code = error?.code ?? error?.name ?? 'error';
  const detail = error?.detail ?? (error?.message !== code ? error?.message : '') ?? '';
  box.textContent = `${code}${detail ? `: ${detail}` : ''}${error?.fatal === false ? ' (retrying)' : ''}`;
  box.dataset.fatal = String(error?.fatal !== false);
  box.hidden = false;
}

// ---- Rich text: Froala (editor A) and TinyMCE through the `wave` plugin (editor D) ----

/**
 * The documented usage, literally: Froala gets `init(config)` inside its `initialized` handler with `editor: this`;
 * TinyMCE gets `external_plugins: { wave }` and a `wave` option, and the page reads the session the plugin made
 * from `editor.plugins.wave.coedit`. The page also exposes `window.froala` / `window.tiny` (the editor).
 */
function runRichTextDemo(kind) {
  const { params, docId, userName, initialText, waveLog } = setUpPage();
  const watch = (coedit) => {
    window.coedit = coedit;
    for (const name of EVENTS) coedit.on(name, (payload) => waveLog[name].push(payload));
    coedit.on('status', renderStatus);
    coedit.on('users_update', renderUsers);
    coedit.on('error', showError);
  };
  const hostHtml = htmlOf(initialText);

  // Froala: the session object first (its events are watched from the start), the editor next, `init` last.
  const coedit = kind === 'froala' && typeof window.Coedit === 'function' ? new Coedit() : null;
  if (coedit) watch(coedit);
  window.waveStarted = loadConfig().then(({ apiKey, serverUrl, token }) => {
    // `token` only when a test serves one (README "Security"); the demo key needs none.
    const config = { docId, apiKey, serverUrl, user: userFrom(params, userName), ...presenceOptions(params), ...(token ? { token } : {}) };
    return kind === 'froala' ? startFroala(coedit, config, hostHtml) : startTinymce(config, hostHtml, watch);
  });
  window.waveStarted.catch((err) => showError(err));
}

function startFroala(coedit, config, hostHtml, selector = '#editor') {
  if (!coedit) {
    return Promise.reject({ code: 'script_missing', detail: 'wave.client.js did not load (is the Wave server running?)', fatal: true });
  }
  return new Promise((resolve, reject) => {
    new FroalaEditor(selector, {
      placeholderText: 'Start typing…',
      heightMin: 300,
      toolbarButtons: ['bold', 'italic', 'underline', 'strikeThrough', '|', 'paragraphFormat', 'formatUL', 'formatOL', 'quote', '|', 'insertLink', 'insertImage', 'insertTable', '|', 'undo', 'redo'],
      events: {
        initialized: function () {
          if (hostHtml !== null) this.html.set(hostHtml);
          window.froala = this;
          coedit.init({ ...config, app: 'editorA', editor: this }).then(resolve, reject);
        },
      },
    });
  });
}

function startTinymce(config, hostHtml, watch, id = 'editor') {
  if (hostHtml !== null) $(id).value = hostHtml;
  return new Promise((resolve, reject) => {
    tinymce.init({
      selector: `#${id}`,
      license_key: 'gpl',
      // Where TinyMCE loads its theme, model, icons and plugins from. It guesses from the script tags, and guesses
      // wrong on a page that loads other editors' scripts too (the any-editor page).
      base_url: '/demo/vendor/tinymce',
      suffix: '.min',
      menubar: false,
      height: 380,
      plugins: 'lists link table image',
      toolbar: 'undo redo | blocks | bold italic underline strikethrough | bullist numlist blockquote | link image table',
      external_plugins: { wave: `${config.serverUrl}/waveEditorD/2.x/plugin.min.js` },
      wave: config,
      setup: (editor) => {
        // Registered before the plugin's own `init` handler, so nothing the session emits is missed.
        editor.on('init', () => {
          window.tiny = editor;
          watch(editor.plugins.wave.coedit);
          editor.plugins.wave.ready.then(resolve, reject);
        });
      },
    }).catch(reject);
  });
}

/** The host's stored copy as HTML, loaded into a rich editor before the session starts: one paragraph per line of `text`. */
function htmlOf(text) {
  return text == null ? null
    : text.split('\n').map((line) => `<p>${line.replace(/&/g, '&amp;').replace(/</g, '&lt;') || '<br>'}</p>`).join('');
}

// ---- One document, any editor: Quill, Froala and TinyMCE side by side, one session each ----

/**
 * Each editor is bound as its integration guide says (API.md "Usage per editor"), all on the same `docId`, each with
 * its own session object: Quill with `init(config)`, Froala with `init(config)` in its `initialized` handler, TinyMCE
 * through the `wave` plugin (which uses the page's `window.Coedit`). Whichever session starts first seeds the
 * document from the host's copy (`text`), the others take it. For tests the page exposes `window.quill`,
 * `window.froala`, `window.tiny`, `window.coedits` ({ quill, froala, tinymce }), `window.coedit` and `window.waveLog`
 * (Quill's session) and `window.waveStarted` (all three started).
 */
function runAnyEditorDemo() {
  const { params, docId, userName, initialText, waveLog } = setUpPage();
  const textPage = new URL('text.html', location.href);
  textPage.searchParams.set('doc', docId);
  $('open-text').href = textPage.href;
  if (typeof window.Coedit !== 'function') {
    showError({ code: 'script_missing', detail: 'wave.client.js did not load (is the Wave server running?)', fatal: true });
    window.waveStarted = Promise.reject(new Error('Coedit is not defined'));
    window.waveStarted.catch(() => {});
    return;
  }
  const coedits = {};
  window.coedits = coedits;
  // Each panel shows its own session's status; the page's line sums up the three, so it repeats none of them.
  const statuses = {};
  const watch = (kind) => (coedit) => {
    coedits[kind] = coedit;
    coedit.on('status', (status) => {
      const { state, saved, pending } = status;
      const line = document.querySelector(`.status[data-for="${kind}"]`);
      line.textContent = `${state} · ${saved ? 'saved' : `${pending} unsaved`}`;
      line.dataset.saved = String(saved);
      statuses[kind] = status;
      renderSessionsStatus(Object.values(statuses));
    });
    coedit.on('error', showError);
    if (kind !== 'quill') return;
    window.coedit = coedit;
    for (const name of EVENTS) coedit.on(name, (payload) => waveLog[name].push(payload));
    coedit.on('users_update', renderUsers);
  };
  const quill = createQuill(initialText, '#quill');
  const quillSession = new Coedit();
  watch('quill')(quillSession);
  const froalaSession = new Coedit();
  watch('froala')(froalaSession);
  const hostHtml = htmlOf(initialText);
  window.waveStarted = loadConfig().then(({ apiKey, serverUrl, token }) => {
    const config = (editorName) => ({
      docId, apiKey, serverUrl, user: userFrom(params, `${userName} (${editorName})`), ...presenceOptions(params), ...(token ? { token } : {}),
    });
    return Promise.all([
      quillSession.init({ ...config('Quill'), app: 'editorC', editor: quill }),
      startFroala(froalaSession, config('Froala'), hostHtml, '#froala'),
      startTinymce(config('TinyMCE'), hostHtml, watch('tinymce'), 'tinymce'),
    ]);
  });
  window.waveStarted.catch((err) => showError(err));
}
