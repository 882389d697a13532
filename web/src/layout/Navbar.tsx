import { Avatar, Button, Dropdown, Menu, Tooltip } from 'antd'
import { MenuFoldOutlined, MenuUnfoldOutlined, SettingOutlined, UserOutlined } from '@ant-design/icons'
import { useLocation, useNavigate } from 'react-router'
import { useAppStore } from '../stores/app'
import { useUserStore } from '../stores/user'
import { useSettingsStore } from '../stores/settings'
import { useSiteStore } from '../stores/site'
import { useLoginDialogStore } from '../stores/loginDialog'
import { useTagsViewStore } from '../stores/tagsView'
import { activeHeaderKey, headerMenu, homeTarget } from '../router/routes'
import HeaderSearch from '../components/HeaderSearch'
import Screenfull from '../components/Screenfull'
import SizeSelect from '../components/SizeSelect'
import ErrorLog from '../components/ErrorLog'

export default function Navbar() {
  const { sidebarOpened, toggleSidebar, device } = useAppStore()
  const { token, id, loginName, avatar, logout } = useUserStore()
  const marketingUrl = useSiteStore((s) => s.marketingUrl)
  const openSettings = useSettingsStore((s) => s.setPanelVisible)
  const openLogin = useLoginDialogStore((s) => s.open)
  const resetTags = useTagsViewStore((s) => s.reset)
  const { pathname } = useLocation()
  const navigate = useNavigate()
  const active = activeHeaderKey(pathname)

  const onHeaderClick = (key: string) => {
    const entry = headerMenu.find((h) => h.key === key)
    if (!entry) return
    if (entry.to === 'marketing') {
      const target = homeTarget(marketingUrl)
      if ('external' in target) window.open(target.external, '_blank', 'noopener')
      else navigate(target.path)
    } else {
      navigate(entry.to)
    }
  }

  const onUserMenu = async (key: string) => {
    if (key === 'account') navigate('/order/account')
    else if (key === 'taocan') navigate('/order/taocan')
    else if (key === 'logout') {
      const from = pathname
      await logout()
      resetTags()
      navigate(`/login?redirect=${from}`)
    }
  }

  return (
    <div className="navbar">
      <span className="hamburger" onClick={toggleSidebar} role="button" aria-label="切换侧边栏">
        {sidebarOpened && device === 'desktop' ? <MenuFoldOutlined /> : <MenuUnfoldOutlined />}
      </span>
      <Menu
        className="header-menu"
        mode="horizontal"
        selectedKeys={active ? [active] : []}
        items={headerMenu.map((h) => ({ key: h.key, label: h.title }))}
        onClick={({ key }) => onHeaderClick(key)}
        data-testid="header-menu"
      />
      <div className="navbar-right">
        {device === 'desktop' && (
          <>
            <HeaderSearch />
            <ErrorLog />
            <Screenfull />
            <SizeSelect />
          </>
        )}
        <Tooltip title="页面设置">
          <SettingOutlined className="navbar-icon" onClick={() => openSettings(true)} aria-label="页面设置" />
        </Tooltip>
        {token && id !== null ? (
          <Dropdown
            trigger={['click']}
            menu={{
              items: [
                { key: 'account', label: '账户中心' },
                { key: 'taocan', label: '优惠套餐' },
                { type: 'divider' },
                { key: 'logout', label: '退出登录' },
              ],
              onClick: ({ key }) => void onUserMenu(key),
            }}
          >
            <span className="user-area" data-testid="user-area" title={loginName}>
              <Avatar size="small" src={avatar || undefined} icon={<UserOutlined />} />
              <span className="user-id">ID：{id}</span>
            </span>
          </Dropdown>
        ) : (
          <Button type="primary" size="small" onClick={() => openLogin()} data-testid="open-login">
            登录 / 注册
          </Button>
        )}
      </div>
    </div>
  )
}
