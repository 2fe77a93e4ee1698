/**
 * A small typed event emitter. Listener errors are caught and reported to `onListenerError` so that a host's
 * broken handler never breaks syncing.
 */
export class Emitter<Events extends { [K in keyof Events]: unknown }> {
  private readonly listeners = new Map<keyof Events, Set<(payload: never) => void>>();

  constructor(private readonly onListenerError: (err: unknown, name: keyof Events) => void) {}

  on<K extends keyof Events>(name: K, fn: (payload: Events[K]) => void): () => void {
    let set = this.listeners.get(name);
    if (!set) {
      set = new Set();
      this.listeners.set(name, set);
    }
    set.add(fn as (payload: never) => void);
    return () => this.off(name, fn);
  }

  off<K extends keyof Events>(name: K, fn: (payload: Events[K]) => void): void {
    this.listeners.get(name)?.delete(fn as (payload: never) => void);
  }

  emit<K extends keyof Events>(name: K, payload: Events[K]): void {
    const set = this.listeners.get(name);
    if (!set) return;
    for (const fn of [...set]) {
      try {
        (fn as (payload: Events[K]) => void)(payload);
      } catch (err) {
        this.onListenerError(err, name);
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}
