import { useState } from 'react'
import { useQuery } from '@tanstack/react-query'
import { Alert } from 'antd'
import { post } from '../api/client'
import { matchPattern } from '../router/routes'

interface Notice {
  title: string
  content: string
  level: 'info' | 'warning' | 'success'
  pages: string[]
  enabled: boolean
}

interface NoticeItem {
  id: string
  value: Notice
  updatedAt: number | null
}

const loadNotices = () => post<NoticeItem[]>('api/base/ai_sys_config_api/f/load_all_by_entity', { data: { entity: 'notices' }, silent: true })

const DISMISSED_KEY = 'wenjian-dismissed-notices'

function dismissedNotices(): string[] {
  try {
    return JSON.parse(sessionStorage.getItem(DISMISSED_KEY) ?? '[]') as string[]
  } catch {
    return []
  }
}

/**
 * The operators' notices for the page in front of the user (console → 公告与站点). A notice
 * closed here stays closed for this browser session, until the operator changes it.
 */
export default function NoticeBar({ path }: { path: string }) {
  const { data } = useQuery({ queryKey: ['notices'], queryFn: loadNotices, staleTime: 60_000, refetchInterval: 5 * 60_000 })
  const [dismissed, setDismissed] = useState(dismissedNotices)
  const shown = (data ?? []).filter(
    (n) => n.value.enabled && (n.value.pages.length === 0 || n.value.pages.some((p) => matchPattern(p, path))) && !dismissed.includes(`${n.id}@${n.updatedAt}`),
  )
  if (shown.length === 0) return null
  const dismiss = (key: string) => {
    const next = [...dismissed, key]
    sessionStorage.setItem(DISMISSED_KEY, JSON.stringify(next))
    setDismissed(next)
  }
  return (
    <div className="notice-bar" data-testid="notice-bar">
      {shown.map((n) => (
        <Alert
          key={n.id}
          type={n.value.level}
          showIcon
          closable
          onClose={() => dismiss(`${n.id}@${n.updatedAt}`)}
          message={n.value.title}
          description={n.value.content}
        />
      ))}
    </div>
  )
}
