import { create } from 'zustand'
import { getSiteConfig, type SiteConfig } from '../api/user'
import { zhCN } from '../locales/zh-CN'
import { setSiteTimeZone } from '../utils/format'

interface SiteState extends SiteConfig {
  load: () => Promise<void>
}

export const useSiteStore = create<SiteState>((set) => ({
  siteTitle: zhCN.siteTitle,
  marketingUrl: '',
  qrProvider: 'local',
  version: '',
  chatPriceFenPerThousand: 0,
  timeZone: 'Asia/Shanghai',
  timeZoneLabel: '北京时间',
  load: async () => {
    try {
      const config = await getSiteConfig()
      setSiteTimeZone(config.timeZone, config.timeZoneLabel)
      set(config)
    } catch {
      // The defaults are usable; without a marketing URL 首页 opens our own /dashboard.
    }
  },
}))
