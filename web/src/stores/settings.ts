import { create } from 'zustand'

export interface PageSettings {
  theme: string
  tagsView: boolean
  fixedHeader: boolean
  sidebarLogo: boolean
}

const STORAGE_KEY = 'wenjian-settings'

/** Spec §3: tags view off, fixed header on, sidebar logo on; theme #1890ff. */
export const defaultSettings: PageSettings = {
  theme: '#1890ff',
  tagsView: false,
  fixedHeader: true,
  sidebarLogo: true,
}

function load(): PageSettings {
  try {
    const saved = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? '{}')
    return { ...defaultSettings, ...saved }
  } catch {
    return defaultSettings
  }
}

interface SettingsState extends PageSettings {
  panelVisible: boolean
  setPanelVisible: (visible: boolean) => void
  change: <K extends keyof PageSettings>(key: K, value: PageSettings[K]) => void
  reset: () => void
}

function persist(state: PageSettings) {
  const { theme, tagsView, fixedHeader, sidebarLogo } = state
  localStorage.setItem(STORAGE_KEY, JSON.stringify({ theme, tagsView, fixedHeader, sidebarLogo }))
}

export const useSettingsStore = create<SettingsState>((set, get) => ({
  ...load(),
  panelVisible: false,
  setPanelVisible: (panelVisible) => set({ panelVisible }),
  change: (key, value) => {
    set({ [key]: value } as Partial<SettingsState>)
    persist(get())
  },
  reset: () => {
    set(defaultSettings)
    persist(get())
  },
}))
