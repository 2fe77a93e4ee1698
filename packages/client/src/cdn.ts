/**
 * The CDN bundle (`/lib/2.x/api/wave.client.js`, IIFE): defines `window.Coedit`. The default server is the
 * origin this script was loaded from, read while the script runs (`document.currentScript` is null later).
 */
import { Coedit, CoeditError, setDefaultServerUrl } from './index.js';

const script = typeof document !== 'undefined' ? document.currentScript : null;
if (script instanceof HTMLScriptElement && script.src) setDefaultServerUrl(new URL(script.src).origin);

declare global {
  interface Window {
    Coedit: typeof Coedit;
    CoeditError: typeof CoeditError;
  }
}

window.Coedit = Coedit;
window.CoeditError = CoeditError;
