import { create } from 'zustand'

export interface ErrorLogEntry {
  message: string
  stack?: string
  url: string
  time: number
}

interface ErrorLogState {
  logs: ErrorLogEntry[]
  add: (entry: ErrorLogEntry) => void
  clear: () => void
}

export const useErrorLogStore = create<ErrorLogState>((set) => ({
  logs: [],
  add: (entry) => set((s) => ({ logs: [...s.logs, entry].slice(-100) })),
  clear: () => set({ logs: [] }),
}))

/** Collects uncaught errors and rejections so users can see and report them. */
export function installErrorLogging() {
  const add = useErrorLogStore.getState().add
  window.addEventListener('error', (e) =>
    add({ message: e.message, stack: e.error?.stack, url: location.href, time: Date.now() }),
  )
  window.addEventListener('unhandledrejection', (e) => {
    const reason = e.reason as { message?: string; stack?: string; code?: string } | undefined
    // Failed API calls already told the user; keep only real programming errors.
    if (reason && typeof reason === 'object' && 'status' in reason) return
    add({ message: reason?.message ?? String(e.reason), stack: reason?.stack, url: location.href, time: Date.now() })
  })
}
