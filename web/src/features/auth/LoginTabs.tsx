import { Tabs } from 'antd'
import type { ReactNode } from 'react'

export type LoginTab = 'password' | 'qr'

/** The phone layout of the login panel: password login and QR login as tabs (its own chunk: Tabs
 * is needed on phone-sized screens only). */
export default function LoginTabs({ tab, onChange, form, qr }: { tab: LoginTab; onChange: (tab: LoginTab) => void; form: ReactNode; qr: ReactNode }) {
  return (
    <Tabs
      className="login-tabs"
      activeKey={tab}
      onChange={(key) => onChange(key as LoginTab)}
      centered
      items={[
        { key: 'password', label: '账号登录', children: form },
        { key: 'qr', label: '扫码登录', children: qr },
      ]}
    />
  )
}
