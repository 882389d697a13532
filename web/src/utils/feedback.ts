import type { MessageInstance } from 'antd/es/message/interface'
import { message as staticMessage } from 'antd'

// The antd message API bound to the app's context (theme, locale); set once by <App>.
let api: MessageInstance | null = null

export function setMessageApi(instance: MessageInstance) {
  api = instance
}

/** Toasts last 2 s and sit 90 px from the top (spec §9). */
export const TOAST_SECONDS = 2
export const TOAST_TOP = 90

// Keyed by their text: the same message raised twice (by the request and by the form that
// made it) shows once.
export function toastError(text: string) {
  ;(api ?? staticMessage).error({ key: text, content: text, duration: TOAST_SECONDS })
}

export function toastSuccess(text: string) {
  ;(api ?? staticMessage).success({ key: text, content: text, duration: TOAST_SECONDS })
}

export function toastWarning(text: string) {
  ;(api ?? staticMessage).warning({ key: text, content: text, duration: TOAST_SECONDS })
}
