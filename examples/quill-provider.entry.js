// The Quill provider demo's integration code, as an app would write it; bundled by build.mjs. The shared demo.js
// (which runs after this module) takes the constructor from `window.WaveQuillProvider` and calls `start(config)`.
import Coedit from 'wave-quill-provider';

window.WaveQuillProvider = { Coedit };
