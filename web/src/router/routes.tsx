import {
  AuditOutlined,
  ControlOutlined,
  EditOutlined,
  FileSearchOutlined,
  FileTextOutlined,
  FundProjectionScreenOutlined,
  RobotOutlined,
  ScissorOutlined,
  WalletOutlined,
} from '@ant-design/icons'
import type { MenuGroup, PageRoute } from './meta'
import { lazy } from 'react'

// Each screen is its own chunk, loaded when first opened (AppMain shows a spinner meanwhile), so
// the first route downloads only the shell and its own page.
// The honest "not built yet" page of the services that are not open.
const AccountCenter = lazy(() => import('../features/account'))
const PackagesPage = lazy(() => import('../features/order/PackagesPage'))
const RechargePage = lazy(() => import('../features/order/RechargePage'))
const CheckPage = lazy(() => import('../features/check/CheckPage'))
const SubmitPage = lazy(() => import('../features/check/SubmitPage'))
const RecordsPage = lazy(() => import('../features/check/RecordsPage'))
const CheckReportPage = lazy(() => import('../features/check/CheckReportPage'))
const AigcCheckPage = lazy(() => import('../features/aigc/AigcCheckPage'))
const AigcRecordsPage = lazy(() => import('../features/aigc/AigcRecordsPage'))
const AigcReportPage = lazy(() => import('../features/aigc/AigcReportPage'))
const RewriteSubmitPage = lazy(() => import('../features/rewrite/RewriteSubmitPage'))
const RewriteRecordsPage = lazy(() => import('../features/rewrite/RewriteRecordsPage'))
const ComparisonPage = lazy(() => import('../features/rewrite/ComparisonPage'))
const PasteRewritePage = lazy(() => import('../features/rewrite/PasteRewritePage'))
const SmartRewriteHub = lazy(() => import('../features/chat/SmartRewriteHub'))
const SmartRecordsHub = lazy(() => import('../features/chat/SmartRewriteHub').then((m) => ({ default: m.SmartRecordsHub })))

const PaperStartPage = lazy(() => import('../features/paper/PaperStartPage'))
const PptStartPage = lazy(() => import('../features/ppt/PptStartPage'))
const PptTypePage = lazy(() => import('../features/ppt/PptTypePage'))
const PptRecordsPage = lazy(() => import('../features/ppt/PptRecordsPage'))
const PaperOutlinePage = lazy(() => import('../features/paper/PaperOutlinePage'))
const PaperContentPage = lazy(() => import('../features/paper/PaperContentPage'))
const PaperPackagePage = lazy(() => import('../features/paper/PaperPackagePage'))
const PaperRecordsPage = lazy(() => import('../features/paper/PaperRecordsPage'))
const ConsoleDashboard = lazy(() => import('../features/admin/ConsoleDashboard'))
const ConsoleUsers = lazy(() => import('../features/admin/ConsoleUsers'))
const ConsoleTasks = lazy(() => import('../features/admin/ConsoleTasks'))
const ConsoleOrders = lazy(() => import('../features/admin/ConsoleOrders'))
const ConsolePackages = lazy(() => import('../features/admin/ConsolePackages'))
const ConsolePrices = lazy(() => import('../features/admin/ConsolePrices'))
const ConsoleModels = lazy(() => import('../features/admin/ConsoleModels'))
const ConsoleSite = lazy(() => import('../features/admin/ConsoleSite'))
const ConsoleAudit = lazy(() => import('../features/admin/ConsoleAudit'))
const ConsoleLibrary = lazy(() => import('../features/admin/ConsoleLibrary'))
const ConsolePrompts = lazy(() => import('../features/admin/ConsolePrompts'))

/** Every product screen of spec §2, grouped as the sidebar shows them. */
export const menuGroups: MenuGroup[] = [
  {
    key: 'check',
    title: '论文查重',
    icon: <FileSearchOutlined />,
    pages: [
      { path: '/papercheck/check', meta: { title: '论文查重', affix: true }, element: <CheckPage /> },
      { path: '/paper/report', meta: { title: '查重记录', hidden: true, activeMenu: '/papercheck/check' }, element: <RecordsPage /> },
      { path: '/paper/report/:id', meta: { title: '查重报告', hidden: true, noCache: true, activeMenu: '/paper/report' }, element: <CheckReportPage /> },
      { path: '/paper/submit/:id', meta: { title: '确认提交', hidden: true, noCache: true, activeMenu: '/papercheck/check' }, element: <SubmitPage /> },
    ],
  },
  {
    key: 'machine',
    title: '论文降重',
    icon: <ScissorOutlined />,
    pages: [
      { path: '/papermachinesubmit/papermachine', meta: { title: '论文降重' }, element: <RewriteSubmitPage defaultGoal="similarity" listPath="/papermachine/list" /> },
      { path: '/papermachine/list', meta: { title: '降重记录' }, element: <RewriteRecordsPage contentPath="/papermachine/content" newPath="/papermachinesubmit/papermachine" goal="similarity" title="降重记录" /> },
      { path: '/papermachine/cnki', meta: { title: '段落改写记录' }, element: <RewriteRecordsPage contentPath="/papermachine/content" newPath="/cnki/cnki" paste="cnki" /> },
      { path: '/papermachine/content/:id', meta: { title: '降重详情', hidden: true, noCache: true, activeMenu: '/papermachine/list' }, element: <ComparisonPage /> },
    ],
  },
  {
    key: 'aigcdown',
    title: '降AIGC',
    icon: <RobotOutlined />,
    pages: [
      { path: '/proaigcsubmit/promachine', meta: { title: '降AIGC' }, element: <RewriteSubmitPage defaultGoal="aigc" listPath="/proaigcsubmit/list" /> },
      { path: '/proaigcsubmit/list', meta: { title: '降AIGC记录' }, element: <RewriteRecordsPage contentPath="/proaigcsubmit/content" newPath="/proaigcsubmit/promachine" goal="aigc" title="降AIGC记录" /> },
      { path: '/proaigcsubmit/content/:id', meta: { title: '改写对比', hidden: true, noCache: true, activeMenu: '/proaigcsubmit/list' }, element: <ComparisonPage /> },
      { path: '/aigcdown/machine', meta: { title: 'AI率降低' }, element: <RewriteSubmitPage defaultGoal="aigc" listPath="/aigc/list" /> },
      { path: '/aigc/list', meta: { title: 'AI率降低记录' }, element: <RewriteRecordsPage contentPath="/proaigcsubmit/content" newPath="/aigcdown/machine" goal="aigc" title="AI率降低记录" /> },
    ],
  },
  {
    key: 'aigccheck',
    title: 'AIGC检测',
    icon: <AuditOutlined />,
    pages: [
      { path: '/aigccheck/check', meta: { title: 'AIGC检测' }, element: <AigcCheckPage /> },
      { path: '/aigccheck/list', meta: { title: '检测记录' }, element: <AigcRecordsPage /> },
      { path: '/aigccheck/content/:id', meta: { title: '检测详情', hidden: true, noCache: true, activeMenu: '/aigccheck/list' }, element: <AigcReportPage /> },
    ],
  },
  {
    key: 'cnki',
    title: '段落改写',
    icon: <EditOutlined />,
    pages: [
      { path: '/cnki/cnki', meta: { title: '段落改写' }, element: <PasteRewritePage kind="cnki" /> },
      { path: '/nlp/machine', meta: { title: '智能改写' }, element: <SmartRewriteHub /> },
      { path: '/machine/list', meta: { title: '改写记录' }, element: <SmartRecordsHub /> },
    ],
  },
  {
    key: 'ppt',
    title: '答辩PPT',
    icon: <FundProjectionScreenOutlined />,
    pages: [
      { path: '/aippt/ppt', meta: { title: '答辩PPT' }, element: <PptStartPage /> },
      { path: '/aippt/list', meta: { title: 'PPT记录' }, element: <PptRecordsPage /> },
      { path: '/aippt/ppttype/:id', meta: { title: '确认生成', hidden: true, noCache: true, activeMenu: '/aippt/ppt' }, element: <PptTypePage /> },
    ],
  },
  {
    key: 'aipaper',
    title: '论文生成',
    icon: <FileTextOutlined />,
    pages: [
      { path: '/aipaper/gc', meta: { title: 'AI论文生成' }, element: <PaperStartPage /> },
      { path: '/aipaper/list', meta: { title: 'AI论文列表' }, element: <PaperRecordsPage /> },
      { path: '/aipaper/outline/:id', meta: { title: '论文大纲', hidden: true, noCache: true, activeMenu: '/aipaper/list' }, element: <PaperOutlinePage /> },
      { path: '/aipaper/content/:id', meta: { title: '论文内容', hidden: true, noCache: true, activeMenu: '/aipaper/list' }, element: <PaperContentPage /> },
      { path: '/papergc/gc', meta: { title: '毕业论文生成' }, element: <PaperStartPage /> },
      { path: '/paperwirte/gc', meta: { title: '论文写作' }, element: <PaperStartPage /> },
      { path: '/paperwirte/report', meta: { title: '写作记录' }, element: <PaperRecordsPage /> },
      { path: '/paperwirte/wirte/:id', meta: { title: '写作详情', hidden: true, noCache: true, activeMenu: '/paperwirte/report' }, element: <PaperContentPage /> },
      { path: '/paperwirte/biye', meta: { title: '毕业材料', hidden: true, noCache: true, activeMenu: '/paperwirte/report' }, element: <PaperPackagePage /> },
    ],
  },
  {
    key: 'order',
    title: '套餐与账户',
    icon: <WalletOutlined />,
    pages: [
      { path: '/order/taocan', meta: { title: '优惠套餐' }, element: <PackagesPage /> },
      { path: '/order/recharge', meta: { title: '账户充值' }, element: <RechargePage /> },
      { path: '/order/account', meta: { title: '账户中心' }, element: <AccountCenter /> },
    ],
  },
  {
    key: 'admin',
    title: '运营后台',
    icon: <ControlOutlined />,
    operatorOnly: true,
    pages: [
      { path: '/admin/dashboard', meta: { title: '运营概览' }, element: <ConsoleDashboard /> },
      { path: '/admin/users', meta: { title: '用户管理' }, element: <ConsoleUsers /> },
      { path: '/admin/tasks', meta: { title: '任务管理' }, element: <ConsoleTasks /> },
      { path: '/admin/orders', meta: { title: '订单管理' }, element: <ConsoleOrders /> },
      { path: '/admin/packages', meta: { title: '套餐管理' }, element: <ConsolePackages /> },
      { path: '/admin/prices', meta: { title: '价格设置' }, element: <ConsolePrices /> },
      { path: '/admin/library', meta: { title: '比对库' }, element: <ConsoleLibrary /> },
      { path: '/admin/models', meta: { title: '模型' }, element: <ConsoleModels /> },
      { path: '/admin/prompts', meta: { title: '提示词' }, element: <ConsolePrompts /> },
      { path: '/admin/site', meta: { title: '公告与站点' }, element: <ConsoleSite /> },
      { path: '/admin/audit', meta: { title: '操作日志' }, element: <ConsoleAudit /> },
    ],
  },
]

export const allPages: PageRoute[] = menuGroups.flatMap((g) => g.pages)

/** The group a path belongs to, for breadcrumbs and the header menu's highlight. */
export function findPage(pathname: string): { group?: MenuGroup; page?: PageRoute } {
  for (const group of menuGroups) {
    for (const page of group.pages) {
      if (matchPattern(page.path, pathname)) return { group, page }
    }
  }
  return {}
}

export function matchPattern(pattern: string, pathname: string): boolean {
  const a = pattern.split('/')
  const b = pathname.replace(/\/$/, '').split('/')
  return a.length === b.length && a.every((seg, i) => seg.startsWith(':') || seg === b[i])
}

/**
 * The header menu of spec §1. `home` opens the marketing site in a new tab when the server names
 * one, else our own service overview (see `homeTarget`).
 */
export const headerMenu: { key: string; title: string; to: string | 'marketing'; group?: string }[] = [
  { key: 'home', title: '首页', to: 'marketing' },
  { key: 'check', title: '论文查重', to: '/papercheck/check', group: 'check' },
  { key: 'machine', title: '论文降重', to: '/papermachinesubmit/papermachine', group: 'machine' },
  { key: 'aigcdown', title: '降AIGC', to: '/proaigcsubmit/promachine', group: 'aigcdown' },
  { key: 'aigccheck', title: 'AIGC检测', to: '/aigccheck/check', group: 'aigccheck' },
  { key: 'cnki', title: '段落改写', to: '/cnki/cnki', group: 'cnki' },
  { key: 'ppt', title: '答辩PPT', to: '/aippt/ppt', group: 'ppt' },
  { key: 'aipaper', title: '论文生成', to: '/aipaper/gc', group: 'aipaper' },
  { key: 'order', title: '优惠套餐', to: '/order/taocan', group: 'order' },
]

/** Our own landing page: a card for every service. */
export const DASHBOARD_PATH = '/dashboard'

/** Where 首页 goes: the marketing site when one is configured (http/https), else /dashboard. */
export function homeTarget(marketingUrl: string | null | undefined): { external: string } | { path: string } {
  const url = marketingUrl?.trim()
  return url && /^https?:\/\//i.test(url) ? { external: url } : { path: DASHBOARD_PATH }
}

/** Which header entry is active for a path. */
export function activeHeaderKey(pathname: string): string | undefined {
  if (pathname === DASHBOARD_PATH) return 'home'
  const { group } = findPage(pathname)
  return group && headerMenu.find((h) => h.group === group.key)?.key
}
