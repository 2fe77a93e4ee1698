// What the demo pages (examples/demo.js) expose to tests, as seen from page.evaluate callbacks.

export interface StatusPayload { state: string; saved: boolean; pending: number }
export interface UserEntry { user: { name?: string; email?: string }; joinTime: Date; color: string; self: boolean }
export interface ErrorPayload { code: string; message: string; detail?: string; fatal?: boolean }

export interface WaveLog {
  content_changed: Array<{ source: 'local' | 'remote' }>;
  users_update: UserEntry[][];
  status: StatusPayload[];
  error: ErrorPayload[];
}

export interface CoeditSession {
  on(name: string, fn: (payload: any) => void): () => void;
  getUsers(): UserEntry[];
  getState(): string;
  stop(): Promise<void>;
  forceSync(content: unknown): Promise<void>;
}

export interface QuillLike {
  focus(): void;
  getLength(): number;
  getText(): string;
  setSelection(index: number, length: number, source?: string): void;
}

declare global {
  interface Window {
    coedit?: CoeditSession;
    waveLog?: WaveLog;
    waveStarted?: Promise<unknown>;
    quill?: QuillLike;
    /** Installed by the tests (browser.ts `trackTiming`): in-page timestamps of keys and status events. */
    waveTiming?: { lastKeyAt: number; status: Array<StatusPayload & { at: number }> };
  }
}
