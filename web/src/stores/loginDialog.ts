import { create } from 'zustand'

interface LoginDialogState {
  visible: boolean
  open: () => void
  close: () => void
}

export const useLoginDialogStore = create<LoginDialogState>((set) => ({
  visible: false,
  open: () => set({ visible: true }),
  close: () => set({ visible: false }),
}))
