import { Button, ColorPicker, Divider, Drawer, Switch } from 'antd'
import { useSettingsStore } from '../stores/settings'

const presets = ['#1890ff', '#409EFF', '#13c2c2', '#52c41a', '#722ed1', '#eb2f96', '#fa541c', '#304156']

/** Page settings, kept across reloads. */
export default function SettingsPanel() {
  const s = useSettingsStore()
  return (
    <Drawer title="页面设置" open={s.panelVisible} onClose={() => s.setPanelVisible(false)} size={300}>
      <div className="setting-row">
        <span>主题色</span>
        <ColorPicker
          value={s.theme}
          presets={[{ label: '推荐', colors: presets }]}
          onChangeComplete={(c) => s.change('theme', c.toHexString())}
          aria-label="主题色"
        />
      </div>
      <div className="setting-row">
        <span>显示标签栏</span>
        <Switch checked={s.tagsView} onChange={(v) => s.change('tagsView', v)} aria-label="显示标签栏" />
      </div>
      <div className="setting-row">
        <span>固定头部</span>
        <Switch checked={s.fixedHeader} onChange={(v) => s.change('fixedHeader', v)} aria-label="固定头部" />
      </div>
      <div className="setting-row">
        <span>侧边栏 Logo</span>
        <Switch checked={s.sidebarLogo} onChange={(v) => s.change('sidebarLogo', v)} aria-label="侧边栏 Logo" />
      </div>
      <Divider />
      <Button block onClick={s.reset}>
        恢复默认设置
      </Button>
    </Drawer>
  )
}
