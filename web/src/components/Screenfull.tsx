import { useEffect, useState } from 'react'
import { Tooltip } from 'antd'
import { FullscreenExitOutlined, FullscreenOutlined } from '@ant-design/icons'
import screenfull from 'screenfull'
import { toastWarning } from '../utils/feedback'
import { zhCN } from '../locales/zh-CN'

export default function Screenfull() {
  const [full, setFull] = useState(false)
  useEffect(() => {
    if (!screenfull.isEnabled) return
    const onChange = () => setFull(screenfull.isFullscreen)
    screenfull.on('change', onChange)
    return () => screenfull.off('change', onChange)
  }, [])
  const toggle = () => {
    if (!screenfull.isEnabled) {
      toastWarning(zhCN.fullscreenUnsupported)
      return
    }
    void screenfull.toggle()
  }
  const Icon = full ? FullscreenExitOutlined : FullscreenOutlined
  return (
    <Tooltip title={full ? '退出全屏' : '全屏'}>
      <Icon className="navbar-icon" onClick={toggle} aria-label="全屏" />
    </Tooltip>
  )
}
