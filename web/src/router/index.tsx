import { lazy, Suspense, type ReactNode } from 'react'
import { Spin } from 'antd'
import { createBrowserRouter, redirect, type RouteObject } from 'react-router'
import Layout from '../layout/Layout'
import { guardLoader } from './guard'
import { allPages, DASHBOARD_PATH } from './routes'
import RedirectPage from '../features/errors/RedirectPage'

// Pages in their own chunks (see routes.tsx); the shell's AppMain supplies the Suspense boundary.
const FeatureUnavailable = lazy(() => import('../components/FeatureUnavailable'))
const NotFoundPage = lazy(() => import('../features/errors/ErrorPages').then((m) => ({ default: m.NotFoundPage })))
const UnauthorizedPage = lazy(() => import('../features/errors/ErrorPages').then((m) => ({ default: m.UnauthorizedPage })))
const LoginPage = lazy(() => import('../features/auth/LoginPage'))
const ForgotPasswordPage = lazy(() => import('../features/auth/ForgotPasswordPage'))
const AuthRedirectPage = lazy(() => import('../features/auth/AuthRedirectPage'))
const DashboardPage = lazy(() => import('../features/home/DashboardPage'))
const QrConfirmPage = lazy(() => import('../features/auth/QrConfirmPage'))
const VerifyPage = lazy(() => import('../features/verify/VerifyPage'))

/** Pages that stand alone, outside the shell, need their own Suspense boundary. */
const standalone = (page: ReactNode) => <Suspense fallback={<Spin className="page-spin" />}>{page}</Suspense>

const utilityRoutes: RouteObject[] = [
  { path: '/redirect/*', element: <RedirectPage />, handle: { hidden: true, noTag: true } },
  { path: '/login', element: <LoginPage />, handle: { title: '登录', hidden: true, noTag: true } },
  { path: '/forgot-password', element: <ForgotPasswordPage />, handle: { title: '忘记密码', hidden: true, noTag: true } },
  { path: '/auth-redirect', element: <AuthRedirectPage />, handle: { hidden: true, noTag: true } },
  { path: '/404', element: <NotFoundPage />, handle: { title: '页面不存在', hidden: true, noTag: true } },
  { path: '/401', element: <UnauthorizedPage />, handle: { title: '无权访问', hidden: true, noTag: true } },
  {
    path: '/gpt',
    element: <FeatureUnavailable feature="对话式改写" detail="以对话方式逐段改写与润色。" />,
    handle: { title: '对话改写', hidden: true },
  },
]

export const routeObjects: RouteObject[] = [
  // The phone confirmation page stands alone: no shell on a phone-sized screen.
  { path: '/m/qr/:id', element: standalone(<QrConfirmPage />), handle: { title: '扫码登录确认' } },
  // Report verification is public and stands alone too: whoever holds a printed report checks it here.
  { path: '/verify', element: standalone(<VerifyPage />), handle: { title: '报告真伪核验' } },
  {
    id: 'root',
    path: '/',
    element: <Layout />,
    loader: guardLoader,
    // Run the guard on every navigation, not only when the root's params change.
    shouldRevalidate: () => true,
    children: [
      { index: true, loader: () => redirect('/papercheck/check') },
      // Our own landing page: what 首页 opens when no marketing site is configured.
      { path: DASHBOARD_PATH, element: <DashboardPage />, handle: { title: '首页' } },
      { path: '/paperwirte', loader: () => redirect('/paperwirte/gc') },
      ...utilityRoutes,
      ...allPages.map((p) => ({ path: p.path, element: p.element, handle: p.meta })),
      { path: '*', loader: () => redirect('/') },
    ],
  },
]

export const router = createBrowserRouter(routeObjects)
