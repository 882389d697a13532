import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import App from './app/App'
import { installErrorLogging } from './stores/errorLog'
import './styles.css'

// Spec §9: error logging is active in production builds.
if (import.meta.env.PROD) installErrorLogging()

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
)
