import { create } from 'zustand'

/** Why the dialog opened and where to go once the user is signed in. */
export interface LoginRequest {
  /** Shown at the top of the dialog, e.g. 请先登录后使用 AIGC检测. */
  reason?: string
  /** An in-app path to continue to after a successful login. */
  redirect?: string
}

interface LoginDialogState extends LoginRequest {
  visible: boolean
  open: (request?: LoginRequest) => void
  close: () => void
}

export const useLoginDialogStore = create<LoginDialogState>((set) => ({
  visible: false,
  reason: undefined,
  redirect: undefined,
  open: (request) =>
    set({
      visible: true,
      // Guard against being handed a click event (onClick={open}).
      reason: typeof request?.reason === 'string' ? request.reason : undefined,
      redirect: typeof request?.redirect === 'string' ? request.redirect : undefined,
    }),
  close: () => set({ visible: false, reason: undefined, redirect: undefined }),
}))
