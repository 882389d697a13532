import { create } from 'zustand'
import { getSiteConfig, type SiteConfig } from '../api/user'
import { zhCN } from '../locales/zh-CN'

interface SiteState extends SiteConfig {
  load: () => Promise<void>
}

export const useSiteStore = create<SiteState>((set) => ({
  siteTitle: zhCN.siteTitle,
  marketingUrl: '',
  qrProvider: 'local',
  version: '',
  chatPriceFenPerThousand: 0,
  load: async () => {
    try {
      set(await getSiteConfig())
    } catch {
      // The defaults are usable; without a marketing URL 首页 opens our own /dashboard.
    }
  },
}))
