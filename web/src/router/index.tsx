import { createBrowserRouter, redirect, type RouteObject } from 'react-router'
import Layout from '../layout/Layout'
import { guardLoader } from './guard'
import { allPages } from './routes'
import LoginPage from '../features/auth/LoginPage'
import ForgotPasswordPage from '../features/auth/ForgotPasswordPage'
import AuthRedirectPage from '../features/auth/AuthRedirectPage'
import QrConfirmPage from '../features/auth/QrConfirmPage'
import VerifyPage from '../features/verify/VerifyPage'
import RedirectPage from '../features/errors/RedirectPage'
import { NotFoundPage, UnauthorizedPage } from '../features/errors/ErrorPages'
import FeatureUnavailable from '../components/FeatureUnavailable'

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
  { path: '/m/qr/:id', element: <QrConfirmPage />, handle: { title: '扫码登录确认' } },
  // Report verification is public and stands alone too: whoever holds a printed report checks it here.
  { path: '/verify', element: <VerifyPage />, handle: { title: '报告真伪核验' } },
  {
    id: 'root',
    path: '/',
    element: <Layout />,
    loader: guardLoader,
    // Run the guard on every navigation, not only when the root's params change.
    shouldRevalidate: () => true,
    children: [
      { index: true, loader: () => redirect('/papercheck/check') },
      { path: '/dashboard', loader: () => redirect('/papercheck/check') },
      { path: '/paperwirte', loader: () => redirect('/paperwirte/gc') },
      ...utilityRoutes,
      ...allPages.map((p) => ({ path: p.path, element: p.element, handle: p.meta })),
      { path: '*', loader: () => redirect('/') },
    ],
  },
]

export const router = createBrowserRouter(routeObjects)
