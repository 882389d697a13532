import Cookies from 'js-cookie'
import { create } from 'zustand'

export type Device = 'desktop' | 'mobile'
export type UiSize = 'default' | 'medium' | 'small' | 'mini'

/** Below this width the shell switches to mobile mode (spec §9). */
export const MOBILE_BREAKPOINT = 992

const SIDEBAR_COOKIE = 'sidebarStatus'
const SIZE_COOKIE = 'size'

interface AppState {
  sidebarOpened: boolean
  withoutAnimation: boolean
  device: Device
  size: UiSize
  toggleSidebar: () => void
  closeSidebar: (withoutAnimation: boolean) => void
  setDevice: (device: Device) => void
  setSize: (size: UiSize) => void
}

const sizes: UiSize[] = ['default', 'medium', 'small', 'mini']

function initialSize(): UiSize {
  const saved = Cookies.get(SIZE_COOKIE) as UiSize | undefined
  return saved && sizes.includes(saved) ? saved : 'medium'
}

export const useAppStore = create<AppState>((set, get) => ({
  // The sidebar's open state is kept in a cookie ('1' open, '0' closed); open by default.
  sidebarOpened: Cookies.get(SIDEBAR_COOKIE) !== '0',
  withoutAnimation: false,
  device: 'desktop',
  size: initialSize(),
  toggleSidebar: () => {
    const opened = !get().sidebarOpened
    Cookies.set(SIDEBAR_COOKIE, opened ? '1' : '0')
    set({ sidebarOpened: opened, withoutAnimation: false })
  },
  closeSidebar: (withoutAnimation) => {
    Cookies.set(SIDEBAR_COOKIE, '0')
    set({ sidebarOpened: false, withoutAnimation })
  },
  setDevice: (device) => set({ device }),
  setSize: (size) => {
    Cookies.set(SIZE_COOKIE, size)
    set({ size })
  },
}))
