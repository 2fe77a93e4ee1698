/**
 * The Coedit the plugin carries for pages that did not load wave.client.js: the session core with the TinyMCE
 * adapter only. Built as a separate IIFE and evaluated lazily by the plugin (see build.mjs), so a page that does
 * load wave.client.js never evaluates a second copy of Yjs.
 */
import { CoeditBase, createTinymceAdapter } from 'wave-client';

export class Coedit extends CoeditBase {
  constructor() {
    super({ tinymce: createTinymceAdapter });
  }
}
