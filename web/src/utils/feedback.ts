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

export function toastError(text: string) {
  ;(api ?? staticMessage).error({ content: text, duration: TOAST_SECONDS })
}

export function toastSuccess(text: string) {
  ;(api ?? staticMessage).success({ content: text, duration: TOAST_SECONDS })
}

export function toastWarning(text: string) {
  ;(api ?? staticMessage).warning({ content: text, duration: TOAST_SECONDS })
}
